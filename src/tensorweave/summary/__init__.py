"""`tf.summary`: summary ops, FileWriter and event files (TensorBoard's protocol buffers,
imported on first use).

The summary ops and their builders live in ops/summary/; FileWriter, FileWriterCache
and `tf.train.summary_iterator` in summary/writer.py. The protocol buffer classes
`tf.summary.Summary`, `SummaryDescription`, `Event`, `SessionLog` and
`TaggedRunMetadata` are TensorBoard's, loaded when first named.
"""
import importlib as _importlib

from tensorweave.summary import writer as _writer  # noqa: F401  (exports FileWriter)

# public name -> (module of tensorboard.compat.proto, class)
_PROTO_CLASSES = {
    "Summary": ("summary_pb2", "Summary"),
    "SummaryDescription": ("summary_pb2", "SummaryDescription"),
    "SummaryMetadata": ("summary_pb2", "SummaryMetadata"),
    "HistogramProto": ("summary_pb2", "HistogramProto"),
    "Event": ("event_pb2", "Event"),
    "SessionLog": ("event_pb2", "SessionLog"),
    "TaggedRunMetadata": ("event_pb2", "TaggedRunMetadata"),
    "LogMessage": ("event_pb2", "LogMessage"),
    # other protos TF1 exposes at the top level (tf.AttrValue, ...), served the same way
    "AttrValue": ("attr_value_pb2", "AttrValue"),
    "GraphDef": ("graph_pb2", "GraphDef"),
    "NodeDef": ("node_def_pb2", "NodeDef"),
    "NameAttrList": ("attr_value_pb2", "NameAttrList"),
    "TensorInfo": ("meta_graph_pb2", "TensorInfo"),
}
# the ones TF1 has in tf.summary; the others are top-level names only (tf.SummaryMetadata)
_IN_THIS_NAMESPACE = ("Summary", "SummaryDescription", "Event", "SessionLog",
                      "TaggedRunMetadata")


def _proto_class(name: str):
    """The TensorBoard protocol buffer class exported as `name` (`_PROTO_CLASSES`)."""
    module, cls = _PROTO_CLASSES[name]
    return getattr(_importlib.import_module("tensorboard.compat.proto." + module), cls)


def __getattr__(name: str):
    if name in _IN_THIS_NAMESPACE:
        value = _proto_class(name)
        globals()[name] = value
        return value
    raise AttributeError("module 'tensorweave.summary' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(_IN_THIS_NAMESPACE))
