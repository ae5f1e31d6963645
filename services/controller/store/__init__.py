"""The metadata store: SQLAlchemy tables, Alembic migrations, the queries that need real SQL,
and rows turned into the protobuf messages the API and the bus carry."""
