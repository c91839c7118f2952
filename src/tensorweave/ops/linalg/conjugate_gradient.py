"""`tf.linalg.experimental.conjugate_gradient`: solving A x = b for a self-adjoint,
positive definite LinearOperator A with the (preconditioned) conjugate gradient method,
as an in-graph while loop over a batch of right-hand sides."""
import collections

from tensorweave.framework.api_export import tf_export
from tensorweave.ops.linalg.linear_operator_util import ops

CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


@tf_export("linalg.experimental.conjugate_gradient")
def conjugate_gradient(operator, rhs, preconditioner=None, x=None, tol: float = 1e-5,
                       max_iter: int = 20, name: str = "conjugate_gradient") -> CGState:
    """Solves `operator @ x = rhs` by conjugate gradients.

    Iterates until every right-hand side's residual norm is at most `tol` times its
    initial one, or `max_iter` steps.

    Args:
      operator: a self-adjoint, positive definite LinearOperator [..., N, N].
      rhs: a Tensor [..., N] of right-hand sides (batch shapes broadcast).
      preconditioner: an optional LinearOperator approximating operator's inverse.
      x: an optional initial guess [..., N] (default zeros).
      tol: the relative residual norm to stop at.
      max_iter: the most iterations.
      name: name scope.

    Returns:
      CGState(i, x, r, p, gamma): the iterations run, the solution, the residual, the
      search direction and the residual's (preconditioned) squared norm.
    """
    tf = ops()

    def dot(a, b):  # a^H b over the last axis, batched
        return tf.reduce_sum(tf.math.conj(a) * b, axis=-1)

    def norm(v):
        return tf.norm(v, axis=-1)

    def keep_going(i, state):
        return tf.logical_and(i < max_iter, tf.reduce_any(norm(state.r) > tol))

    def step(i, state):
        z = operator.matvec(state.p)
        alpha = state.gamma / dot(state.p, z)
        x = state.x + alpha[..., None] * state.p
        r = state.r - alpha[..., None] * z
        q = r if preconditioner is None else preconditioner.matvec(r)
        gamma = dot(r, q)
        p = q + (gamma / state.gamma)[..., None] * state.p
        return i + 1, CGState(i + 1, x, r, p, gamma)

    with tf.name_scope(name):
        rhs = tf.convert_to_tensor(rhs, name="rhs")
        batch = tf.broadcast_dynamic_shape(tf.shape(rhs)[:-1], operator.batch_shape_tensor())
        if preconditioner is not None:
            batch = tf.broadcast_dynamic_shape(batch, preconditioner.batch_shape_tensor())
        shape = tf.concat([batch, tf.shape(rhs)[-1:]], axis=0)
        r0 = tf.broadcast_to(rhs, shape)
        tol = tol * norm(r0)
        if x is None:
            x = tf.zeros(shape, dtype=rhs.dtype.base_dtype)
        else:
            r0 = rhs - operator.matvec(x)
        p0 = r0 if preconditioner is None else preconditioner.matvec(r0)
        i = tf.constant(0, dtype=tf.int32)
        state = CGState(i=i, x=x, r=r0, p=p0, gamma=dot(r0, p0))
        _, state = tf.while_loop(keep_going, step, [i, state])
        return CGState(state.i, x=state.x, r=state.r, p=state.p, gamma=state.gamma)
