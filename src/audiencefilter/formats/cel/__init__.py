"""CEL (the Common Expression Language), read into our tree (`reader.py`) and written from it
(`write.py`)."""
