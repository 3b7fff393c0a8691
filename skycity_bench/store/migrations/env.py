"""Alembic's entry: runs the store's migrations on the connection db.migrate hands over
(config.attributes["connection"]), inside its transaction."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
