"""What people read: docs pages, the docs site and its API, the terminal page of explain."""
