"""Documents, readers for the ICDA data formats, preparation and the synthetic generator."""

from icda.data.document import Document, read_documents, write_documents

__all__ = ["Document", "read_documents", "write_documents"]
