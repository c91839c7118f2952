"""tf.train.ClusterSpec and TF_CONFIG (issue 15, first step), against TF1's documented
behaviour."""
import json

import pytest

import tensorweave as tf

SPEC = {"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["p0:2222", "p1:2222"]}


def test_cluster_spec_from_lists():
    c = tf.train.ClusterSpec(SPEC)
    assert c.jobs == ["worker", "ps"]
    assert c.num_tasks("worker") == 3 and c.num_tasks("ps") == 2
    assert c.task_indices("ps") == [0, 1]
    assert c.task_address("worker", 2) == "w2:2222"
    assert c.job_tasks("ps") == ["p0:2222", "p1:2222"]
    assert c.as_dict() == SPEC
    assert bool(c) and not bool(tf.train.ClusterSpec({}))


def test_sparse_jobs_keep_their_indices():
    c = tf.train.ClusterSpec({"worker": {1: "w1:1", 3: "w3:1"}})
    assert c.as_dict() == {"worker": {1: "w1:1", 3: "w3:1"}}
    assert c.job_tasks("worker") == [None, "w1:1", None, "w3:1"]
    assert c.task_indices("worker") == [1, 3]
    with pytest.raises(ValueError, match="No task with index 0 in job 'worker'"):
        c.task_address("worker", 0)
    # a dict of consecutive indices from 0 reads back as a list
    assert tf.train.ClusterSpec({"ps": {1: "b", 0: "a"}}).as_dict() == {"ps": ["a", "b"]}


def test_cluster_def_round_trip_and_equality():
    c = tf.train.ClusterSpec(SPEC)
    proto = c.as_cluster_def()
    assert [j.name for j in proto.job] == ["ps", "worker"]  # sorted by name, as TF
    assert dict(proto.job[1].tasks) == {0: "w0:2222", 1: "w1:2222", 2: "w2:2222"}
    again = tf.train.ClusterSpec(proto)
    assert again == c and not (again != c)
    assert tf.train.ClusterSpec(c) == c
    assert c != tf.train.ClusterSpec({"worker": ["w0:2222"]})


def test_bad_clusters_raise():
    with pytest.raises(TypeError, match="dictionary mapping one or more job names"):
        tf.train.ClusterSpec(["w0:1"])
    with pytest.raises(TypeError, match="list or a dictionary"):
        tf.train.ClusterSpec({"worker": "w0:1"})
    with pytest.raises(TypeError, match="must be a string"):
        tf.train.ClusterSpec({"worker": [2222]})
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        tf.train.ClusterSpec(SPEC).num_tasks("chief")


def test_tf_config_resolver(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": SPEC, "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc",
        "environment": "cloud"}))
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert r.cluster_spec() == tf.train.ClusterSpec(SPEC)
    assert (r.task_type, r.task_id, r.rpc_layer, r.environment) == \
        ("worker", 1, "grpc", "cloud")
    assert r.master() == "grpc://w1:2222"
    assert r.master("ps", 0, rpc_layer="") == "p0:2222"
    r.task_type, r.task_id = "ps", 1
    assert r.master() == "grpc://p1:2222"


def test_tf_config_absent_or_malformed(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert not r.cluster_spec() and r.task_type is None and r.task_id is None
    assert r.master() == ""
    monkeypatch.setenv("TF_CONFIG", "{not json")
    import json
    with pytest.raises(json.JSONDecodeError, match="TF_CONFIG is not valid JSON"):
        r.cluster_spec()  # TF's class


def test_repr_lists_jobs_sorted_by_name_as_tf_does():
    spec = tf.train.ClusterSpec({"worker": ["a:1"], "chief": ["b:1"]})
    assert str(spec) == repr(spec) == "ClusterSpec({'chief': ['b:1'], 'worker': ['a:1']})"


def test_simple_cluster_resolver_returns_what_it_was_given():
    cr = tf.distribute.cluster_resolver
    spec = tf.train.ClusterSpec({"worker": ["x:1"], "chief": ["c:0"]})
    r = cr.SimpleClusterResolver(spec, master="m:9", task_type="chief", task_id=0,
                                 rpc_layer="grpc", num_accelerators={"GPU": 2})
    assert r.cluster_spec() is spec
    assert (r.master(), r.master("worker", 0), r.master(rpc_layer="x")) == \
        ("grpc://m:9", "grpc://x:1", "x://m:9")
    assert (r.task_type, r.task_id, r.environment) == ("chief", 0, "")
    assert r.num_accelerators() == {"GPU": 2}
    with pytest.raises(TypeError, match="ClusterSpec"):
        cr.SimpleClusterResolver({"worker": ["x:1"]})
    with pytest.raises(TypeError, match="master must be a string"):
        cr.SimpleClusterResolver(spec, master=3)


def test_union_resolver_merges_clusters_and_takes_the_first_for_the_rest(monkeypatch):
    cr = tf.distribute.cluster_resolver
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"worker": ["a:1", "b:2"], "ps": ["p:3"]},
        "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"}))
    first = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": ["x:1"]}),
                                     master="m:9", task_type="chief", task_id=0)
    union = cr.UnionResolver(first, cr.TFConfigClusterResolver())
    # lists of one job concatenate, in the order of the resolvers
    assert union.cluster_spec().as_dict() == {"worker": ["x:1", "a:1", "b:2"],
                                              "ps": ["p:3"]}
    assert (union.master(), union.master("ps", 0)) == ("m:9", "p:3")
    assert (union.task_type, union.task_id) == ("chief", 0)
    # a dict of tasks merges by index, and a clash of indices is an error
    sparse = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": {3: "y:1"}}))
    assert cr.UnionResolver(first, sparse).cluster_spec().as_dict() == {
        "worker": {0: "x:1", 3: "y:1"}}
    clash = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": {3: "z:1"}}))
    with pytest.raises(KeyError, match="Duplicate keys"):
        cr.UnionResolver(sparse, clash).cluster_spec()
    with pytest.raises(ValueError):
        cr.UnionResolver()
    with pytest.raises(TypeError):
        cr.UnionResolver(3)


def test_a_resolver_counts_the_accelerators_of_its_master():
    cr = tf.distribute.cluster_resolver

    class Local(cr.ClusterResolver):
        def cluster_spec(self):
            return tf.train.ClusterSpec({})

        def master(self, task_type=None, task_id=None, rpc_layer=None):
            return ""

    assert isinstance(cr.TFConfigClusterResolver(), cr.ClusterResolver)
    assert Local().num_accelerators() == {}
    assert Local().num_accelerators(config_proto=tf.ConfigProto(
        device_count={"SIM": 2})) == {"SIM": 2}
