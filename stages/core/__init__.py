"""Paper-independent machinery every stage uses: params, I/O, validation, metrics, claims, seeding."""
