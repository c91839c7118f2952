"""`tf.test.assert_equal_graph_def`: two GraphDefs hold the same nodes, in any order.

Messages follow TF's EqualGraphDef (core/util/equal_graph_def.cc): data inputs compare in
order, control inputs (`^name`) as a set.
"""


def _summarize(node) -> str:
    return "%s = %s[...](%s)" % (node.name, node.op, ", ".join(node.input))


def _node_diff(actual, expected):
    name = actual.name
    if actual.op != expected.op:
        return "Node named '%s' has op '%s' that is not expected '%s'" % (
            name, actual.op, expected.op)
    if actual.device != expected.device:
        return "Node named '%s' has device '%s' that is not expected '%s'" % (
            name, actual.device, expected.device)

    def split(inputs):
        data = [i for i in inputs if not i.startswith("^")]
        return data, sorted(i for i in inputs if i.startswith("^"))
    if split(actual.input) != split(expected.input):
        return "Node named '%s' has inputs '%s' that don't match expected '%s'" % (
            name, ", ".join(actual.input), ", ".join(expected.input))
    for key in sorted(actual.attr):
        value = actual.attr[key]
        if key not in expected.attr:
            return "Node named '%s' has unexpected attr '%s' with value: %s" % (
                name, key, str(value).strip())
        if value != expected.attr[key]:
            return ("Node named '%s' has attr '%s' with value: %s that does not match "
                    "expected: %s" % (name, key, str(value).strip(),
                                      str(expected.attr[key]).strip()))
    for key in sorted(expected.attr):
        if key not in actual.attr:
            return "Node named '%s' missing expected attr '%s' with value: %s" % (
                name, key, str(expected.attr[key]).strip())
    return None


def graph_def_diff(actual, expected):
    """The first difference between two GraphDefs as TF words it, or None."""
    expected_nodes = {node.name: node for node in expected.node}
    for node in actual.node:
        other = expected_nodes.pop(node.name, None)
        if other is None:
            return "Found unexpected node '%s' not in expected graph" % _summarize(node)
        diff = _node_diff(node, other)
        if diff:
            return diff
    for node in expected_nodes.values():
        return "Did not find expected node '%s' in actual graph" % _summarize(node)
    return None


def assert_equal_graph_def(actual, expected, checkpoint_v2=False,
                           hash_table_shared_name=False):
    """Raises AssertionError naming the first difference between two GraphDefs.

    checkpoint_v2 and hash_table_shared_name are accepted for TF1 compatibility; the
    graphs tensorweave writes hold no temporary save paths or generated table names.
    """
    for arg, arg_name in ((actual, "actual"), (expected, "expected")):
        if type(arg).__name__ != "GraphDef" or not hasattr(arg, "node"):
            raise TypeError("Expected tf.GraphDef for %s, got %s" % (
                arg_name, type(arg).__name__))
    diff = graph_def_diff(actual, expected)
    if diff:
        raise AssertionError(diff)
