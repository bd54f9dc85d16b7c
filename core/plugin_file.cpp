#include "plugin_file.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "error.hpp"

namespace fs = std::filesystem;

namespace nnp::core {
namespace {

// The host's ELF machine, to name a plugin built for another.
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr uint16_t kHostMachine = EM_PPC64;
#elif defined(__riscv)
constexpr uint16_t kHostMachine = EM_RISCV;
#else
constexpr uint16_t kHostMachine = EM_NONE;  // not checked
#endif

std::string machine_name(uint16_t machine) {
  switch (machine) {
    case EM_386: return "32-bit x86";
    case EM_X86_64: return "x86-64";
    case EM_ARM: return "32-bit Arm";
    case EM_AARCH64: return "AArch64 (64-bit Arm)";
    case EM_PPC64: return "64-bit POWER";
    case EM_S390: return "IBM Z";
    case EM_RISCV: return "RISC-V";
    case EM_MIPS: return "MIPS";
    case EM_CUDA: return "NVIDIA CUDA (a GPU code object)";
    case 224: return "AMD GPU (a GPU code object)";  // EM_AMDGPU
    default: return "ELF machine " + std::to_string(machine);
  }
}

// Every segment dlopen would map lies inside the file: dlopen maps a cut
// file's segments past its end, and the first touch of them is a SIGBUS
// that kills the process (seen with a plugin cut in half).
void check_segments_in_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) fail(NNP_IO_ERROR, "cannot be read (", std::strerror(errno), ")");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(file, std::fclose);
  ElfW(Ehdr) header{};
  if (std::fread(&header, sizeof header, 1, file) != 1)
    fail(NNP_IO_ERROR, "not a loadable shared library (its ELF header is cut short)");
  if (std::fseek(file, 0, SEEK_END) != 0) fail(NNP_IO_ERROR, "cannot be read (", std::strerror(errno), ")");
  const uint64_t size = static_cast<uint64_t>(std::ftell(file));
  if (header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum == 0 || header.e_phnum > 4096 ||
      header.e_phoff > size || uint64_t{header.e_phnum} * sizeof(ElfW(Phdr)) > size - header.e_phoff)
    fail(NNP_IO_ERROR, "not a loadable shared library (its program headers are missing or lie past the end of the ",
         size, "-byte file)");
  std::vector<ElfW(Phdr)> segments(header.e_phnum);
  if (std::fseek(file, static_cast<long>(header.e_phoff), SEEK_SET) != 0 ||
      std::fread(segments.data(), sizeof(ElfW(Phdr)), segments.size(), file) != segments.size())
    fail(NNP_IO_ERROR, "not a loadable shared library (its program headers cannot be read)");
  for (const ElfW(Phdr) & segment : segments)
    if (segment.p_type == PT_LOAD || segment.p_type == PT_DYNAMIC || segment.p_type == PT_INTERP)
      if (segment.p_offset > size || segment.p_filesz > size - segment.p_offset)
        fail(NNP_IO_ERROR, "not a loadable shared library (a segment lies past the end of the ", size,
             "-byte file: was it cut short?)");
}

}  // namespace

// A symlink loop, a name too long, a directory or FIFO named *.so, an
// unreadable file, something not ELF, an ELF for another class, byte order or
// machine, an executable or object file: each refused with its reason.
void check_plugin_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // follows symlinks
  if (ec == std::errc::no_such_file_or_directory) fail(NNP_NOT_FOUND, "no such file");
  if (ec) fail(NNP_IO_ERROR, "cannot be read (", ec.message(), ")");
  if (status.type() == fs::file_type::not_found) fail(NNP_NOT_FOUND, "no such file");
  switch (status.type()) {
    case fs::file_type::regular: break;
    case fs::file_type::directory: fail(NNP_IO_ERROR, "is a directory, not a shared library");
    case fs::file_type::fifo: fail(NNP_IO_ERROR, "is a FIFO (named pipe), not a shared library");
    case fs::file_type::socket: fail(NNP_IO_ERROR, "is a socket, not a shared library");
    default: fail(NNP_IO_ERROR, "is not a regular file, so not a shared library");
  }
  unsigned char header[64] = {};
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) fail(NNP_IO_ERROR, "cannot be read (", std::strerror(errno), ")");
  const size_t got = std::fread(header, 1, sizeof header, file);
  std::fclose(file);
  if (got < 20 || std::memcmp(header, ELFMAG, SELFMAG) != 0)
    fail(NNP_IO_ERROR, "not a loadable shared library (not an ELF file)");
  if (header[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32))
    fail(NNP_IO_ERROR, "is a ", header[EI_CLASS] == ELFCLASS32 ? "32" : "64", "-bit ELF file; this nnplug is ",
         sizeof(void*) * 8, "-bit: build the plugin for this machine");
  const bool little = header[EI_DATA] == ELFDATA2LSB;
  if (little != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__))
    fail(NNP_IO_ERROR, "is a ", little ? "little" : "big", "-endian ELF file, unlike this machine");
  auto u16 = [&](int at) {
    return little ? static_cast<uint16_t>(header[at] | header[at + 1] << 8)
                  : static_cast<uint16_t>(header[at] << 8 | header[at + 1]);
  };
  const uint16_t type = u16(16), machine = u16(18);
  if (kHostMachine != EM_NONE && machine != kHostMachine)
    fail(NNP_IO_ERROR, "is built for ", machine_name(machine), " (ELF machine ", machine, "); this nnplug runs on ",
         machine_name(kHostMachine), ": build the plugin for this machine");
  if (type != ET_DYN)
    fail(NNP_IO_ERROR, "is an ELF ",
         type == ET_EXEC   ? "executable"
         : type == ET_REL  ? "relocatable object (.o)"
         : type == ET_CORE ? "core dump"
                           : "file of another type",
         ", not a shared library");
  check_segments_in_file(path);
}

bool is_function_symbol(void* address) {
  Dl_info info{};
  void* entry = nullptr;
  if (dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr)
    return true;  // nothing known: dlopen's checks stand
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  const unsigned type = ELF64_ST_TYPE(symbol->st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC;
}

}  // namespace nnp::core
