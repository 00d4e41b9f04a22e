"""The Triton axis fastest's own splits: the sweep behind SPLIT_ROWS_TRITON and
VECTOR_COLUMNS_TRITON (README.md)."""
