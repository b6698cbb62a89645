"""The chaos suite: bad bytes, concurrency, kills and hostile JSON-RPC traffic, bounded in time."""
