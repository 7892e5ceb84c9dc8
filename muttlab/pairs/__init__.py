"""The pair store: corruption pairs and every revision of them, in SQLite or any SQLAlchemy database."""
