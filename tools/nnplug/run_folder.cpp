#include "run_folder.hpp"

#include <filesystem>
#include <nnp/nnp.hpp>

namespace nnplug {
namespace {

namespace fs = std::filesystem;

bool holds_run(const fs::path& folder) {
  std::error_code ec;
  return fs::exists(folder / "checkpoint.safetensors", ec) || fs::exists(folder / "metrics.csv", ec);
}

bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

}  // namespace

std::string choose_run_folder(const std::string& out, bool out_given, bool force, const std::string& resume) {
  fs::path folder = out;
  const fs::path resume_folder = resume.empty() ? fs::path() : fs::path(resume).parent_path();
  if (!out_given && !resume.empty()) {
    folder = resume_folder.empty() ? fs::path(".") : resume_folder;  // a resumed run continues in its folder
  } else if (!out_given) {
    for (int n = 2; holds_run(folder); ++n) folder = out + "-" + std::to_string(n);
  } else if (holds_run(folder) && !force &&
             !(!resume.empty() && same_folder(folder, resume_folder.empty() ? "." : resume_folder))) {
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--out " + out +
                                               " already holds a run (its checkpoint.safetensors or metrics.csv); "
                                               "choose another --out, resume it with --resume, or give --force to "
                                               "replace it");
  }
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder))
    throw nnp::Error(NNP_IO_ERROR, "cannot create the run folder " + folder.string() + " (" + ec.message() + ")");
  return folder.string();
}

}  // namespace nnplug
