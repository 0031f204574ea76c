"""Arrow helpers shared by the interop tests (pyarrow is imported by the
caller's first use, not by importing this module)."""


def extension_type(name):
    """An instance of a new pyarrow extension type (a DataType subclass
    written in Python) over int32, registered nowhere."""
    import pyarrow as pa

    class Tagged(pa.ExtensionType):
        def __init__(self):
            super().__init__(pa.int32(), name)

        def __arrow_ext_serialize__(self):
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type, serialized):
            return cls()

    return Tagged()
