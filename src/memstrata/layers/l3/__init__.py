"""L3 persona, pure logic: scene navigation, escaping of recall tags, splitting persona.md."""
