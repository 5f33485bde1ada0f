"""caffe.io: pycaffe's data helpers on numpy and caffe_pb2 (no compiled code).

What it offers (the names and behaviour of BVLC pycaffe's caffe.io):
  - Datum / BlobProto / BlobProtoVector <-> ndarray: array_to_datum, datum_to_array,
    array_to_blobproto, blobproto_to_array, arraylist_to_blobprotovector_str,
    blobprotovector_str_to_arraylist;
  - Transformer: H x W x K images (float, [0, 1]) to a net's K x H x W input and back
    (resize, transpose, channel swap, raw scale, mean, input scale);
  - load_image (Pillow reads the file), resize_image (nearest or bilinear on the
    pixel centres, edges clamped), oversample (4 corners + centre, and their mirrors).
Bad arguments raise ValueError (or KeyError for an unknown input) naming what is wrong.
"""
import numpy as np

from .proto import caffe_pb2

# ---------------------------------------------------------------------------
# Protocol buffers <-> arrays


def blobproto_to_array(blob, return_diff=False):
    """The data (or, with return_diff, the diff) of a BlobProto as an ndarray of the
    blob's shape: `shape.dim`, or the legacy num/channels/height/width when set."""
    values = blob.diff if return_diff else blob.data
    legacy = any(blob.HasField(f) for f in ('num', 'channels', 'height', 'width'))
    shape = (blob.num, blob.channels, blob.height, blob.width) if legacy else tuple(blob.shape.dim)
    arr = np.array(values, dtype=np.float32)
    if arr.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError('BlobProto holds %d values, its shape %s needs %d'
                         % (arr.size, shape, int(np.prod(shape, dtype=np.int64))))
    return arr.reshape(shape)


def array_to_blobproto(arr, diff=None):
    """An ndarray (any number of axes) as a BlobProto with shape.dim; `diff`, when
    given, must have the same shape."""
    arr = np.asarray(arr)
    blob = caffe_pb2.BlobProto()
    blob.shape.dim.extend(int(d) for d in arr.shape)
    blob.data.extend(arr.astype(np.float32).flat)
    if diff is not None:
        diff = np.asarray(diff)
        if diff.shape != arr.shape:
            raise ValueError('diff has shape %s, the data %s' % (diff.shape, arr.shape))
        blob.diff.extend(diff.astype(np.float32).flat)
    return blob


def arraylist_to_blobprotovector_str(arraylist):
    """A list of ndarrays as a serialized BlobProtoVector (bytes)."""
    vec = caffe_pb2.BlobProtoVector()
    vec.blobs.extend(array_to_blobproto(arr) for arr in arraylist)
    return vec.SerializeToString()


# pycaffe's original (misspelt) name, kept for scripts that use it.
arraylist_to_blobprotovecor_str = arraylist_to_blobprotovector_str


def blobprotovector_str_to_arraylist(serialized):
    """A serialized BlobProtoVector as a list of ndarrays."""
    vec = caffe_pb2.BlobProtoVector()
    vec.ParseFromString(serialized)
    return [blobproto_to_array(blob) for blob in vec.blobs]


def array_to_datum(arr, label=None):
    """A C x H x W ndarray as a Datum: uint8 arrays go to `data` (bytes), anything
    else to `float_data`."""
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise ValueError('array_to_datum needs a 3-axis (channels x height x width) array, got shape %s'
                         % (arr.shape,))
    datum = caffe_pb2.Datum()
    datum.channels, datum.height, datum.width = (int(d) for d in arr.shape)
    if arr.dtype == np.uint8:
        datum.data = np.ascontiguousarray(arr).tobytes()
    else:
        datum.float_data.extend(arr.astype(float).flat)
    if label is not None:
        datum.label = int(label)
    return datum


def datum_to_array(datum):
    """A Datum's values as a C x H x W ndarray (uint8 from `data`, float from
    `float_data`); the label stays in datum.label."""
    shape = (datum.channels, datum.height, datum.width)
    count = datum.channels * datum.height * datum.width
    if len(datum.data):
        if len(datum.data) != count:
            raise ValueError('Datum holds %d bytes, its shape %s needs %d' % (len(datum.data), shape, count))
        return np.frombuffer(datum.data, dtype=np.uint8).reshape(shape).copy()
    if len(datum.float_data) != count:
        raise ValueError('Datum holds %d floats, its shape %s needs %d' % (len(datum.float_data), shape, count))
    return np.array(datum.float_data, dtype=float).reshape(shape)


# ---------------------------------------------------------------------------
# Pre-processing


class Transformer:
    """Prepares H x W x K images for a net's inputs and undoes it.

    inputs: {input blob name: its shape (N, K, H, W)}, e.g.
    {'data': net.blobs['data'].data.shape}. preprocess applies, in this order:
    resize to (H, W), transpose, channel swap, raw scale, mean subtraction, input scale.
    """

    def __init__(self, inputs):
        self.inputs = {name: tuple(int(d) for d in shape) for name, shape in inputs.items()}
        self.transpose = {}
        self.channel_swap = {}
        self.raw_scale = {}
        self.mean = {}
        self.input_scale = {}

    def __check_input(self, in_):
        if in_ not in self.inputs:
            raise KeyError('{} is not one of the net inputs: {}'.format(in_, sorted(self.inputs)))

    def preprocess(self, in_, data):
        """data: an H' x W' x K ndarray. Returns the K x H x W float32 array for input `in_`."""
        self.__check_input(in_)
        caffe_in = np.asarray(data).astype(np.float32, copy=True)
        in_dims = self.inputs[in_][2:]
        if caffe_in.shape[:2] != in_dims:
            caffe_in = resize_image(caffe_in, in_dims)
        transpose = self.transpose.get(in_)
        if transpose is not None:
            caffe_in = caffe_in.transpose(transpose)
        channel_swap = self.channel_swap.get(in_)
        if channel_swap is not None:
            caffe_in = caffe_in[list(channel_swap), :, :]
        raw_scale = self.raw_scale.get(in_)
        if raw_scale is not None:
            caffe_in = caffe_in * np.float32(raw_scale)
        mean = self.mean.get(in_)
        if mean is not None:
            caffe_in = caffe_in - mean
        input_scale = self.input_scale.get(in_)
        if input_scale is not None:
            caffe_in = caffe_in * np.float32(input_scale)
        return np.ascontiguousarray(caffe_in, dtype=np.float32)

    def deprocess(self, in_, data):
        """The inverse of preprocess (without the resize): K x H x W (a leading axis of
        1 is dropped) back to H x W x K."""
        self.__check_input(in_)
        decaf_in = np.array(data, dtype=np.float32).squeeze()
        input_scale = self.input_scale.get(in_)
        if input_scale is not None:
            decaf_in = decaf_in / np.float32(input_scale)
        mean = self.mean.get(in_)
        if mean is not None:
            decaf_in = decaf_in + mean
        raw_scale = self.raw_scale.get(in_)
        if raw_scale is not None:
            decaf_in = decaf_in / np.float32(raw_scale)
        channel_swap = self.channel_swap.get(in_)
        if channel_swap is not None:
            decaf_in = decaf_in[list(np.argsort(channel_swap)), :, :]
        transpose = self.transpose.get(in_)
        if transpose is not None:
            decaf_in = decaf_in.transpose(np.argsort(transpose))
        return decaf_in

    def set_transpose(self, in_, order):
        """The axis order taking an H x W x K image to K x H x W, usually (2, 0, 1)."""
        self.__check_input(in_)
        if len(order) != len(self.inputs[in_]) - 1:
            raise ValueError('Transpose order needs to have the same number of dimensions as the input '
                             '(%d), got %s' % (len(self.inputs[in_]) - 1, tuple(order)))
        if sorted(order) != list(range(len(order))):
            raise ValueError('Transpose order %s is not a permutation of the axes' % (tuple(order),))
        self.transpose[in_] = tuple(order)

    def set_channel_swap(self, in_, order):
        """The order to take the channels in after the transpose, e.g. (2, 1, 0) for
        RGB to BGR."""
        self.__check_input(in_)
        if len(order) != self.inputs[in_][1]:
            raise ValueError('Channel swap needs to have the same number of dimensions as the input channels '
                             '(%d), got %s' % (self.inputs[in_][1], tuple(order)))
        if sorted(order) != list(range(len(order))):
            raise ValueError('Channel swap %s is not a permutation of the channels' % (tuple(order),))
        self.channel_swap[in_] = tuple(order)

    def set_raw_scale(self, in_, scale):
        """Multiplies the raw input (after transpose and channel swap), e.g. 255 for
        models trained on [0, 255] images."""
        self.__check_input(in_)
        self.raw_scale[in_] = scale

    def set_mean(self, in_, mean):
        """The mean to subtract: one value per channel (K,) or a K x H x W (or H x W)
        array of the input's shape."""
        self.__check_input(in_)
        mean = np.asarray(mean, dtype=np.float32)
        if mean.ndim == 1:
            if mean.shape[0] != self.inputs[in_][1]:
                raise ValueError('Mean channels incompatible with input: %d values for %d channels'
                                 % (mean.shape[0], self.inputs[in_][1]))
            mean = mean[:, np.newaxis, np.newaxis]
        else:
            ms = mean.shape
            if len(ms) == 2:
                ms = (1,) + ms
            if len(ms) != 3:
                raise ValueError('Mean shape invalid: %s (give K, H x W or K x H x W)' % (mean.shape,))
            if ms != self.inputs[in_][1:]:
                raise ValueError('Mean shape incompatible with input shape: %s vs %s'
                                 % (ms, self.inputs[in_][1:]))
            mean = mean.reshape(ms)
        self.mean[in_] = mean

    def set_input_scale(self, in_, scale):
        """Multiplies the input after the mean subtraction (raw_scale acts before it)."""
        self.__check_input(in_)
        self.input_scale[in_] = scale


# ---------------------------------------------------------------------------
# Image IO


def _pillow():
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError('caffe.io.load_image reads images with Pillow, which is not installed '
                          '(Debian: apt-get install python3-pil; pip: pip install pillow)') from e
    return Image


def load_image(filename, color=True):
    """An image file as float32 in [0, 1]: H x W x 3 (RGB) when `color`, otherwise
    H x W x 1 for a grayscale file (a color file stays H x W x 3). Alpha is dropped."""
    Image = _pillow()
    with Image.open(filename) as im:
        if im.mode in ('P', 'CMYK', 'YCbCr', 'LAB', 'HSV', 'RGBA', 'RGBX', 'PA'):
            im = im.convert('RGB')
        elif im.mode in ('LA', '1'):
            im = im.convert('L')
        arr = np.array(im)
    kind, size = arr.dtype.kind, arr.dtype.itemsize
    if kind == 'u' and size == 1:
        img = arr.astype(np.float32) / 255.0
    elif kind == 'u' and size == 2:  # 16-bit, either byte order ('I;16', 'I;16B')
        img = arr.astype(np.float32) / 65535.0
    elif kind == 'i':  # Pillow's 'I' mode: 16-bit PNGs and 32-bit images
        img = arr.astype(np.float32) / (65535.0 if arr.max(initial=0) <= 65535 else 2147483647.0)
    else:  # bool (0/1) and float ('F') images are already in their range
        img = arr.astype(np.float32)
    if img.ndim == 2:
        img = img[:, :, np.newaxis]
        if color:
            img = np.tile(img, (1, 1, 3))
    return img


def _resize_axis(n_in, n_out, order):
    """Source positions for each output pixel along one axis: indices (lo, hi) and the
    weight of hi, sampling at pixel centres ((o + 0.5) * n_in / n_out - 0.5)."""
    centre = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
    if order == 0:
        idx = np.clip(np.floor(centre + 0.5).astype(np.int64), 0, n_in - 1)
        return idx, idx, np.zeros(n_out)
    centre = np.clip(centre, 0, n_in - 1)
    lo = np.floor(centre).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, centre - lo


def resize_image(im, new_dims, interp_order=1):
    """Resizes an H x W x K array to new_dims = (height, width) x K: interp_order 0 is
    nearest, 1 (default) bilinear, both on pixel centres with clamped edges (as
    skimage's resize with mode='edge'); float32 result."""
    im = np.asarray(im)
    if im.ndim != 3:
        raise ValueError('resize_image needs an H x W x K array, got shape %s' % (im.shape,))
    if len(new_dims) != 2 or min(int(new_dims[0]), int(new_dims[1])) < 1:
        raise ValueError('new_dims must be (height, width) >= 1, got %s' % (tuple(new_dims),))
    if interp_order not in (0, 1):
        raise ValueError('interp_order must be 0 (nearest) or 1 (bilinear), got %r' % (interp_order,))
    h, w = int(new_dims[0]), int(new_dims[1])
    src = im.astype(np.float64)
    if im.shape[0] == 0 or im.shape[1] == 0:
        raise ValueError('resize_image: empty image of shape %s' % (im.shape,))
    y0, y1, wy = _resize_axis(im.shape[0], h, interp_order)
    x0, x1, wx = _resize_axis(im.shape[1], w, interp_order)
    wy = wy[:, np.newaxis, np.newaxis]
    wx = wx[np.newaxis, :, np.newaxis]
    top = src[y0][:, x0] * (1 - wx) + src[y0][:, x1] * wx
    bottom = src[y1][:, x0] * (1 - wx) + src[y1][:, x1] * wx
    return (top * (1 - wy) + bottom * wy).astype(np.float32)


def oversample(images, crop_dims):
    """Ten crops per image: the four corners and the centre, then the same five
    mirrored left-right. images: a sequence of H x W x K arrays of one shape;
    crop_dims: (height, width). Returns a (10 N) x height x width x K float32 array."""
    images = [np.asarray(im) for im in images]
    if not images:
        raise ValueError('oversample needs at least one image')
    h, w = images[0].shape[:2]
    ch, cw = int(crop_dims[0]), int(crop_dims[1])
    if not (0 < ch <= h and 0 < cw <= w):
        raise ValueError('crop %s does not fit the %dx%d images' % ((ch, cw), h, w))
    # Corners, then the centre crop (pycaffe's rounding: start at int(centre - crop / 2)).
    starts = [(0, 0), (0, w - cw), (h - ch, 0), (h - ch, w - cw), (int(h / 2.0 - ch / 2.0), int(w / 2.0 - cw / 2.0))]
    crops = np.empty((10 * len(images), ch, cw, images[0].shape[-1]), dtype=np.float32)
    for i, im in enumerate(images):
        if im.shape != images[0].shape:
            raise ValueError('oversample: image %d has shape %s, image 0 %s' % (i, im.shape, images[0].shape))
        for k, (y, x) in enumerate(starts):
            crops[10 * i + k] = im[y:y + ch, x:x + cw, :]
            crops[10 * i + 5 + k] = im[y:y + ch, x:x + cw, :][:, ::-1, :]
    return crops
