"""caffe.io against hand-computed numpy references: proto <-> array round trips,
Transformer's preprocess/deprocess, resize_image (a per-pixel loop), oversample,
load_image (PNG files written with known pixels)."""
import sys

import numpy as np
import pytest

import caffe
import caffe.io
from caffe.proto import caffe_pb2


# --- protos <-> arrays ------------------------------------------------------

def test_blobproto_round_trip_nd():
    rng = np.random.default_rng(1)
    for shape in [(2, 3, 4, 5), (7,), (3, 11), (2, 1, 3, 1, 2)]:
        a = rng.standard_normal(shape).astype(np.float32)
        d = rng.standard_normal(shape).astype(np.float32)
        blob = caffe.io.array_to_blobproto(a, d)
        assert list(blob.shape.dim) == list(shape)
        back = caffe.io.blobproto_to_array(caffe_pb2.BlobProto.FromString(blob.SerializeToString()))
        assert back.shape == shape and np.array_equal(back, a)
        assert np.array_equal(caffe.io.blobproto_to_array(blob, return_diff=True), d)


def test_blobproto_legacy_4d_fields():
    # Caffe's old BlobProto: num/channels/height/width instead of shape.
    blob = caffe_pb2.BlobProto(num=2, channels=3, height=1, width=2)
    blob.data.extend(float(i) for i in range(12))
    arr = caffe.io.blobproto_to_array(blob)
    assert arr.shape == (2, 3, 1, 2)
    assert arr[1, 2, 0, 1] == 11.0 and arr[0, 1, 0, 0] == 2.0


def test_blobproto_errors():
    with pytest.raises(ValueError, match='diff has shape'):
        caffe.io.array_to_blobproto(np.zeros((2, 2)), np.zeros((4,)))
    blob = caffe_pb2.BlobProto()
    blob.shape.dim.extend([2, 3])
    blob.data.extend([1.0, 2.0])
    with pytest.raises(ValueError, match='holds 2 values'):
        caffe.io.blobproto_to_array(blob)


def test_blobprotovector_round_trip():
    arrays = [np.arange(24, dtype=np.float32).reshape(2, 3, 4), np.array([[1.5, -2.0]], dtype=np.float32)]
    s = caffe.io.arraylist_to_blobprotovector_str(arrays)
    assert isinstance(s, bytes)
    vec = caffe_pb2.BlobProtoVector.FromString(s)
    assert len(vec.blobs) == 2 and list(vec.blobs[1].data) == [1.5, -2.0]
    back = caffe.io.blobprotovector_str_to_arraylist(s)
    assert len(back) == 2 and all(np.array_equal(a, b) for a, b in zip(arrays, back))
    assert caffe.io.arraylist_to_blobprotovecor_str(arrays) == s  # pycaffe's old spelling


def test_datum_uint8_and_float():
    img = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    d = caffe.io.array_to_datum(img, label=7)
    assert (d.channels, d.height, d.width, d.label) == (2, 3, 4, 7)
    assert d.data == bytes(range(24)) and len(d.float_data) == 0
    back = caffe.io.datum_to_array(caffe_pb2.Datum.FromString(d.SerializeToString()))
    assert back.dtype == np.uint8 and np.array_equal(back, img)

    f = np.linspace(-1, 1, 12).reshape(3, 2, 2)
    d = caffe.io.array_to_datum(f)
    assert not d.HasField('label') and len(d.data) == 0
    assert np.allclose(list(d.float_data), f.ravel(), atol=1e-7)
    assert np.allclose(caffe.io.datum_to_array(d), f, atol=1e-7)


def test_datum_errors():
    with pytest.raises(ValueError, match='3-axis'):
        caffe.io.array_to_datum(np.zeros((4, 4), dtype=np.uint8))
    d = caffe_pb2.Datum(channels=1, height=2, width=2, data=b'\x01\x02\x03')
    with pytest.raises(ValueError, match='holds 3 bytes'):
        caffe.io.datum_to_array(d)


# --- resize_image, oversample -------------------------------------------------

def bilinear_reference(im, h, w):
    """Per-pixel loop: sample at pixel centres, clamp to the edges, interpolate."""
    H, W, K = im.shape
    out = np.zeros((h, w, K))
    for y in range(h):
        sy = min(max((y + 0.5) * H / h - 0.5, 0.0), H - 1.0)
        y0 = int(np.floor(sy))
        y1 = min(y0 + 1, H - 1)
        fy = sy - y0
        for x in range(w):
            sx = min(max((x + 0.5) * W / w - 0.5, 0.0), W - 1.0)
            x0 = int(np.floor(sx))
            x1 = min(x0 + 1, W - 1)
            fx = sx - x0
            for k in range(K):
                out[y, x, k] = ((1 - fy) * ((1 - fx) * im[y0, x0, k] + fx * im[y0, x1, k]) +
                                fy * ((1 - fx) * im[y1, x0, k] + fx * im[y1, x1, k]))
    return out


def test_resize_bilinear_against_loop():
    rng = np.random.default_rng(2)
    im = rng.random((7, 5, 3)).astype(np.float32)
    for h, w in [(7, 5), (14, 10), (3, 2), (9, 13), (1, 1)]:
        got = caffe.io.resize_image(im, (h, w))
        assert got.shape == (h, w, 3) and got.dtype == np.float32
        assert np.allclose(got, bilinear_reference(im.astype(np.float64), h, w), atol=1e-6), (h, w)


def test_resize_hand_values():
    # 1-D doubling of [0, 1]: centres at -0.25, 0.25, 0.75, 1.25 -> clamped 0, .25, .75, 1.
    row = np.array([[[0.0], [1.0]]])
    assert np.allclose(caffe.io.resize_image(row, (1, 4))[0, :, 0], [0, 0.25, 0.75, 1])
    # Nearest doubling repeats every pixel twice.
    im = np.array([[1, 2], [3, 4]], dtype=np.float32)[:, :, np.newaxis]
    near = caffe.io.resize_image(im, (4, 4), interp_order=0)[:, :, 0]
    assert np.array_equal(near, [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])
    const = np.full((3, 3, 1), 0.5, np.float32)
    assert np.array_equal(caffe.io.resize_image(const, (5, 2)), np.full((5, 2, 1), 0.5, np.float32))
    with pytest.raises(ValueError, match='interp_order'):
        caffe.io.resize_image(im, (2, 2), interp_order=3)
    with pytest.raises(ValueError, match='H x W x K'):
        caffe.io.resize_image(np.zeros((4, 4)), (2, 2))


def test_oversample_crops():
    im = np.arange(6 * 8 * 2, dtype=np.float32).reshape(6, 8, 2)
    crops = caffe.io.oversample([im, im + 1000], (4, 4))
    assert crops.shape == (20, 4, 4, 2) and crops.dtype == np.float32
    expected = [im[0:4, 0:4], im[0:4, 4:8], im[2:6, 0:4], im[2:6, 4:8], im[1:5, 2:6]]
    for k, e in enumerate(expected):
        assert np.array_equal(crops[k], e), k
        assert np.array_equal(crops[5 + k], e[:, ::-1]), k
        assert np.array_equal(crops[10 + k], e + 1000), k
    with pytest.raises(ValueError, match='does not fit'):
        caffe.io.oversample([im], (7, 4))


# --- Transformer ----------------------------------------------------------------

def test_transformer_preprocess_matches_numpy():
    rng = np.random.default_rng(3)
    img = rng.random((5, 6, 3)).astype(np.float32)  # H x W x RGB in [0, 1]
    t = caffe.io.Transformer({'data': (1, 3, 5, 6)})
    t.set_transpose('data', (2, 0, 1))
    t.set_channel_swap('data', (2, 1, 0))
    t.set_raw_scale('data', 255)
    mean = np.array([104.0, 117.0, 123.0])
    t.set_mean('data', mean)
    t.set_input_scale('data', 0.5)
    got = t.preprocess('data', img)
    expected = (img.transpose(2, 0, 1)[[2, 1, 0]] * 255.0 - mean[:, None, None]) * 0.5
    assert got.shape == (3, 5, 6) and got.dtype == np.float32
    assert np.allclose(got, expected, atol=1e-4)
    # deprocess inverts it (the net's leading batch axis of 1 is squeezed away).
    assert np.allclose(t.deprocess('data', got[np.newaxis]), img, atol=1e-5)


def test_transformer_resizes_to_input_and_elementwise_mean():
    rng = np.random.default_rng(4)
    img = rng.random((10, 12, 1)).astype(np.float32)
    t = caffe.io.Transformer({'data': [2, 1, 5, 6]})
    t.set_transpose('data', (2, 0, 1))
    mean = rng.random((5, 6)).astype(np.float32)  # H x W mean for one channel
    t.set_mean('data', mean)
    got = t.preprocess('data', img)
    expected = bilinear_reference(img.astype(np.float64), 5, 6).transpose(2, 0, 1) - mean[None]
    assert got.shape == (1, 5, 6) and np.allclose(got, expected, atol=1e-5)


def test_transformer_rejects_bad_settings():
    t = caffe.io.Transformer({'data': (1, 3, 4, 4)})
    with pytest.raises(KeyError, match='not one of the net inputs'):
        t.set_raw_scale('label', 2)
    with pytest.raises(ValueError, match='Transpose order'):
        t.set_transpose('data', (1, 0))
    with pytest.raises(ValueError, match='Channel swap'):
        t.set_channel_swap('data', (1, 0))
    with pytest.raises(ValueError, match='Mean channels incompatible'):
        t.set_mean('data', np.zeros(4))
    with pytest.raises(ValueError, match='Mean shape incompatible'):
        t.set_mean('data', np.zeros((3, 5, 4)))
    with pytest.raises(KeyError):
        t.preprocess('label', np.zeros((4, 4, 3)))


# --- load_image -------------------------------------------------------------------

def test_load_image_modes(tmp_path):
    Image = pytest.importorskip('PIL.Image')
    rgb = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3) * 4
    Image.fromarray(rgb, 'RGB').save(tmp_path / 'rgb.png')
    im = caffe.io.load_image(str(tmp_path / 'rgb.png'))
    assert im.shape == (4, 5, 3) and im.dtype == np.float32
    assert np.allclose(im, rgb / 255.0, atol=1e-7)

    gray = np.array([[0, 51], [204, 255]], dtype=np.uint8)
    Image.fromarray(gray, 'L').save(tmp_path / 'gray.png')
    color = caffe.io.load_image(str(tmp_path / 'gray.png'))
    assert color.shape == (2, 2, 3) and np.allclose(color[:, :, 1], gray / 255.0)
    mono = caffe.io.load_image(str(tmp_path / 'gray.png'), color=False)
    assert mono.shape == (2, 2, 1) and np.allclose(mono[:, :, 0], [[0, 0.2], [0.8, 1]])

    rgba = np.dstack([rgb, np.full((4, 5), 128, np.uint8)])
    Image.fromarray(rgba, 'RGBA').save(tmp_path / 'rgba.png')
    im = caffe.io.load_image(str(tmp_path / 'rgba.png'))
    assert im.shape == (4, 5, 3) and np.allclose(im, rgb / 255.0, atol=1e-7)

    deep = np.array([[0, 65535], [32768, 1000]], dtype=np.uint16)
    Image.fromarray(deep).save(tmp_path / 'deep.png')  # 16-bit grayscale PNG
    im = caffe.io.load_image(str(tmp_path / 'deep.png'), color=False)
    assert np.allclose(im[:, :, 0], deep / 65535.0, atol=1e-6)

    with pytest.raises(OSError):
        caffe.io.load_image(str(tmp_path / 'missing.png'))


def test_load_image_without_pillow(monkeypatch, tmp_path):
    # sys.modules[name] = None makes `import name` raise ImportError.
    monkeypatch.setitem(sys.modules, 'PIL', None)
    monkeypatch.setitem(sys.modules, 'PIL.Image', None)
    with pytest.raises(ImportError, match='python3-pil'):
        caffe.io.load_image(str(tmp_path / 'any.png'))
