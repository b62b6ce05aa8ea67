"""Storage: the Store/StoreSession port (base.py) and its SQLite and PostgreSQL adapters; the only
package that knows which database it runs on."""
