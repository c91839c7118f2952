import pytest

import tensorweave as tf


@pytest.fixture
def drain(sess):
    """drain(dataset): every element of `dataset`, read through a one-shot iterator in the
    test's session until OutOfRangeError (at most `limit` elements)."""
    def read(dataset, limit: int = 5000):
        nxt = dataset.make_one_shot_iterator().get_next()
        out = []
        with pytest.raises(tf.errors.OutOfRangeError):
            for _ in range(limit):
                out.append(sess.run(nxt))
        return out
    return read


@pytest.fixture
def outcomes(sess):
    """outcomes(convert, dataset): what each get_next of `dataset` gives until
    OutOfRangeError, in the test's session: `convert(value)`, or for a failed one its
    error's (class, message), as TF goes on after an element's error (at most `limit`)."""
    def read(convert, dataset, limit: int = 30):
        nxt = tf.data.make_one_shot_iterator(dataset).get_next()
        out = []
        for _ in range(limit):
            try:
                value = sess.run(nxt)
            except tf.errors.OutOfRangeError:
                return out
            except tf.errors.OpError as e:
                out.append((type(e), e.message))
                continue
            out.append(convert(value))
        raise AssertionError("more than %d elements" % limit)
    return read
