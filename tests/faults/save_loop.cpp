// Saves a checkpoint over and over until killed: iteration i writes every
// tensor filled with i and metadata {"iteration": i}. The kill-during-save
// test SIGKILLs it at random moments and then reads what is on disk.
#include <cstdio>
#include <nnp/nnp.hpp>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: save_loop <checkpoint path>\n");
    return 2;
  }
  for (long iteration = 1;; ++iteration) {
    nnp::NamedTensors tensors;  // 8 MiB in all
    for (int i = 0; i < 8; ++i)
      tensors.emplace_back("layer" + std::to_string(i) + ".weight",
                           nnp::full({512, 512}, static_cast<double>(iteration)));
    nnp::save_safetensors(tensors, argv[1], {{"iteration", std::to_string(iteration)}});
  }
}
