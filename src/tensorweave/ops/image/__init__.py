"""Image ops (`tf.image`): resizing (resize_ops), codecs through Pillow (codec_ops; 16-bit
color PNGs through pypng, png16_codec), JPEG shape, crop-decoding and quality
(jpeg_ops), crops, pads, flips, rotations and random crops/flips (image_ops), dtype
conversion,
color spaces and (random) color adjustments (color_ops), YIQ/YUV, PSNR, SSIM and
Sobel edges (image_metrics_ops), non-max suppression (nms_ops), drawing boxes and
sampling distorted crops (image_boxes_ops), crop_and_resize and patch extraction
(crop_patch_ops), region proposals (bounding_box_proposals).

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.image import (  # noqa: F401
    resize_ops, image_ops, color_ops, codec_ops, jpeg_ops, image_metrics_ops,
    nms_ops, image_boxes_ops, crop_patch_ops, glimpse_ops, bounding_box_proposals)
