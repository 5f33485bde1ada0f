"""python -m caffe.draw_net NET.prototxt OUT.png [--rankdir LR] [--phase ALL|TRAIN|TEST] [--display_lrm]

Draws a net's prototxt as pycaffe's python/draw_net.py does (format from OUT's
extension: png, svg, pdf, dot, ...). Exit status 1 with one error line for an
unreadable or unparsable prototxt (file:line:column) or missing pydot/graphviz.
"""
import argparse
import sys

from google.protobuf import text_format

from . import draw
from .proto import caffe_pb2


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog='python -m caffe.draw_net',
                                     description='Draw a network graph from a prototxt.')
    parser.add_argument('input_net_proto_file', help='Input network prototxt file')
    parser.add_argument('output_image_file', help='Output image file (its extension picks the format)')
    parser.add_argument('--rankdir', default='LR', choices=['LR', 'TB', 'BT', 'RL'],
                        help='Direction of the graph layout: LR (left to right, default), TB, BT or RL')
    parser.add_argument('--phase', default='ALL', choices=['ALL', 'TRAIN', 'TEST'],
                        help='Which phase\'s layers to draw (ALL: every layer)')
    parser.add_argument('--display_lrm', action='store_true', help='Show the layers\' learning-rate multipliers')
    return parser.parse_args(argv)


def read_net(path):
    """A prototxt as a NetParameter; errors name path:line:column."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    net = caffe_pb2.NetParameter()
    try:
        text_format.Merge(text, net)
    except text_format.ParseError as e:
        # protobuf says "line:column : message"; put the file in front.
        raise ValueError('%s:%s' % (path, e)) from None
    return net


def main(argv=None):
    args = parse_args(argv)
    phase = {'ALL': None, 'TRAIN': caffe_pb2.TRAIN, 'TEST': caffe_pb2.TEST}[args.phase]
    try:
        net = read_net(args.input_net_proto_file)
        print('Drawing net to %s' % args.output_image_file)
        draw.draw_net_to_file(net, args.output_image_file, args.rankdir, phase, args.display_lrm)
    except (OSError, ValueError, ImportError, RuntimeError) as e:
        print('draw_net: error: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
