// The convolution layer set of the dnn benchmarks: bench_conv times every layer in
// every direction, and bench_autotune --suite dnn tunes the forward layers that
// autotune's conv2d spec can express. One table, so both always run the same layers.
#pragma once
#include <utility>

namespace taihu::bench {

// name, problem: the layers (VGG16 conv1_2 and conv3_2, ResNet-50 3x3 res2-4
// and 1x1, AlexNet conv1 and conv2, LeNet conv1 and conv2) at batch 1 and 32, plus
// ResNet-50's 7x7 first layer, and the LeNet and CIFAR-10 "quick" layers at the batch
// taihu-caffe trains them with (64). Filter with e.g. --benchmark_filter='conv/mb1ic'.
inline constexpr std::pair<const char*, const char*> kConvLayers[] = {
    {"resnet50_res3_3x3", "mb1ic128ih28oc128oh28kh3ph1"},
    {"vgg16_conv3_2", "mb1ic256ih56oc256oh56kh3ph1"},
    {"resnet50_res2_3x3", "mb1ic64ih56oc64oh56kh3ph1"},
    {"resnet50_res4_3x3", "mb1ic256ih14oc256oh14kh3ph1"},
    {"resnet50_res2_1x1", "mb1ic256ih56oc64oh56kh1"},
    {"resnet50_conv1", "mb1ic3ih224oc64oh112kh7sh2ph3"},
    {"alexnet_conv1", "mb1ic3ih227oc96oh55kh11sh4"},
    {"alexnet_conv2", "g2mb1ic96ih27oc256oh27kh5ph2"},
    {"lenet_conv1", "mb1ic1ih28oc20oh24kh5"},
    {"lenet_conv2", "mb1ic20ih12oc50oh8kh5"},
    {"vgg16_conv1_2", "mb1ic64ih224oc64oh224kh3ph1"},
    {"resnet50_res3_3x3_b32", "mb32ic128ih28oc128oh28kh3ph1"},
    {"vgg16_conv3_2_b32", "mb32ic256ih56oc256oh56kh3ph1"},
    {"resnet50_res2_3x3_b32", "mb32ic64ih56oc64oh56kh3ph1"},
    {"resnet50_res4_3x3_b32", "mb32ic256ih14oc256oh14kh3ph1"},
    {"resnet50_res2_1x1_b32", "mb32ic256ih56oc64oh56kh1"},
    {"alexnet_conv1_b32", "mb32ic3ih227oc96oh55kh11sh4"},
    {"alexnet_conv2_b32", "g2mb32ic96ih27oc256oh27kh5ph2"},
    {"lenet_conv1_b32", "mb32ic1ih28oc20oh24kh5"},
    {"lenet_conv2_b32", "mb32ic20ih12oc50oh8kh5"},
    {"vgg16_conv1_2_b32", "mb32ic64ih224oc64oh224kh3ph1"},
    {"lenet_conv1_b64", "mb64ic1ih28oc20oh24kh5"},
    {"lenet_conv2_b64", "mb64ic20ih12oc50oh8kh5"},
    {"cifar_quick_conv1_b64", "mb64ic3ih32oc32oh32kh5ph2"},
    {"cifar_quick_conv2_b64", "mb64ic32ih16oc32oh16kh5ph2"},
    {"cifar_quick_conv3_b64", "mb64ic32ih8oc64oh8kh5ph2"},
};

}  // namespace taihu::bench
