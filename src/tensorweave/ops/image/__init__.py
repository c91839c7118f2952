"""Image ops (`tf.image`): resizing (resize_ops), codecs through Pillow (codec_ops),
crops, pads, flips, rotations and random crops/flips (image_ops), dtype conversion,
color spaces and (random) color adjustments (color_ops).

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.image import (  # noqa: F401
    resize_ops, image_ops, color_ops, codec_ops)
