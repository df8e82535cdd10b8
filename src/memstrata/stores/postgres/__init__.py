"""The PostgreSQL backend (``memstrata[postgres]``): psycopg 3, a connection pool and pgvector."""
