"""Record-level reads and edits of each layer, one concept in one place: ``methods`` holds the
facade's methods (``get_atom``, ``update_atom``, ``delete_messages``, ``write_scene``, ...),
``records`` the logic they run in worker threads (``RecordEdits``)."""
