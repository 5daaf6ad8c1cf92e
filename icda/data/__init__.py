"""Documents, readers for the ICDA data formats, cleaning and the synthetic generator."""

from icda.data.document import Document, read_documents, write_documents
from icda.data.cleaning import balance_classes, binarize_rating, deduplicate, drop_short, split_dev
from icda.data.readers import keyword_rationale, read_hotel_test, read_icda, read_jsonl
from icda.data.synthetic import generate_synthetic

__all__ = [
    "Document", "read_documents", "write_documents",
    "read_icda", "read_hotel_test", "read_jsonl", "keyword_rationale",
    "deduplicate", "drop_short", "balance_classes", "split_dev", "binarize_rating",
    "generate_synthetic",
]
