"""caffe.proto.caffe_pb2: generated at build time by protoc from taihu's caffe.proto."""
