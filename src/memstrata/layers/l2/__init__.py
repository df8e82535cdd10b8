"""L2 scenes, pure logic: the scene file format, file names, the index, atom attribution."""
