// Issue 14, class 1: plugin folders from strangers, as a corpus. Every entry
// that cannot be a plugin is that entry's refusal with the right reason (a
// directory as a directory, a wrong ELF machine named), every time it is
// asked for; discovery and every command go on; an entry symbol that is data
// is refused before it is called; a host pointer kept past init is refused
// without being read; what a plugin says is printed escaped.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "test_support.hpp"

using namespace nnp;

namespace {

using nnp::test::corpus;

// The first 64 bytes of an ELF file: class, byte order, type and machine.
std::string elf_header(int elf_class, int data, uint16_t type, uint16_t machine) {
  std::string h(64, '\0');
  h[0] = '\x7f';
  h[1] = 'E';
  h[2] = 'L';
  h[3] = 'F';
  h[4] = static_cast<char>(elf_class);
  h[5] = static_cast<char>(data);
  h[6] = 1;
  auto put16 = [&](int at, uint16_t v) {
    h[at] = static_cast<char>(data == 2 ? v >> 8 : v & 0xff);
    h[at + 1] = static_cast<char>(data == 2 ? v & 0xff : v >> 8);
  };
  put16(16, type);
  put16(18, machine);
  return h;
}

struct PluginCase {
  std::string label, path;
  nnp_status status;
  std::string fragment;
};

class HostilePlugins : public test::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& bytes) {
    std::string file = path(name);
    std::ofstream(file, std::ios::binary) << bytes;
    return file;
  }

  // Every entry of a folder of bad plugins, made here.
  std::vector<PluginCase> make_cases() {
    std::vector<PluginCase> cases;
    auto add = [&](const std::string& label, const std::string& file, nnp_status status, const std::string& fragment) {
      cases.push_back({label, file, status, fragment});
    };
    std::filesystem::create_symlink(path("libloop.so"), path("libloop.so"));
    add("a symlink to itself", path("libloop.so"), NNP_IO_ERROR, "cannot be read (Too many levels of symbolic links)");
    std::filesystem::create_symlink(path("libnowhere.so"), path("libdangling.so"));
    add("a dangling symlink", path("libdangling.so"), NNP_NOT_FOUND, "no such file");
    std::filesystem::create_directory(path("libdir.so"));
    add("a directory named .so", path("libdir.so"), NNP_IO_ERROR, "is a directory");
    std::filesystem::create_symlink(path("libdir.so"), path("liblink_to_dir.so"));
    add("a symlink to a directory", path("liblink_to_dir.so"), NNP_IO_ERROR, "is a directory");
    EXPECT_EQ(::mkfifo(path("libfifo.so").c_str(), 0600), 0);
    add("a FIFO named .so", path("libfifo.so"), NNP_IO_ERROR, "is a FIFO");
    int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path("libsock.so").c_str());
    if (sock >= 0 && path("libsock.so").size() < sizeof address.sun_path &&
        ::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
      add("a socket named .so", path("libsock.so"), NNP_IO_ERROR, "is a socket");
    if (sock >= 0) ::close(sock);
    std::filesystem::create_symlink("/dev/null", path("libnull.so"));
    add("a character device", path("libnull.so"), NNP_IO_ERROR, "is not a regular file");
    add("an empty file", write("libempty.so", ""), NNP_IO_ERROR, "not an ELF file");
    add("a text file", write("libtext.so", "hello\n"), NNP_IO_ERROR, "not an ELF file");
    add("the ELF magic alone",
        write("libmagic.so",
              "\x7f"
              "ELF"),
        NNP_IO_ERROR, "not an ELF file");
    add("a 32-bit ELF", write("lib32.so", elf_header(1, 1, 3, 3)), NNP_IO_ERROR, "is a 32-bit ELF file");
    add("a big-endian ELF", write("libbig.so", elf_header(2, 2, 3, 21)), NNP_IO_ERROR, "big-endian");
    add("an AArch64 library", write("libarm.so", elf_header(2, 1, 3, 183)), NNP_IO_ERROR,
        "is built for AArch64 (64-bit Arm) (ELF machine 183)");
    add("a RISC-V library", write("libriscv.so", elf_header(2, 1, 3, 243)), NNP_IO_ERROR, "is built for RISC-V");
    add("a CUDA code object", write("libcubin.so", elf_header(2, 1, 2, 190)), NNP_IO_ERROR, "NVIDIA CUDA");
    add("an AMD GPU code object", write("libhsaco.so", elf_header(2, 1, 3, 224)), NNP_IO_ERROR, "AMD GPU");
    add("an unknown machine", write("libodd.so", elf_header(2, 1, 3, 9999)), NNP_IO_ERROR, "ELF machine 9999");
#if defined(__x86_64__)
    const uint16_t here = 62;
#elif defined(__aarch64__)
    const uint16_t here = 183;
#else
    const uint16_t here = 0;
#endif
    if (here) {
      add("an ELF executable", write("libexec.so", elf_header(2, 1, 2, here)), NNP_IO_ERROR, "is an ELF executable");
      add("an object file", write("libobject.so", elf_header(2, 1, 1, here)), NNP_IO_ERROR, "relocatable object");
      add("a core dump", write("libcore.so", elf_header(2, 1, 4, here)), NNP_IO_ERROR, "core dump");
      add("a shared-object header and nothing else", write("libheader.so", elf_header(2, 1, 3, here)), NNP_IO_ERROR,
          "not a loadable shared library");
    }
    std::ifstream good(corpus("good"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(good)), std::istreambuf_iterator<char>());
    // Cut after its headers, inside its loaded segments (a cut that drops only
    // debug sections still loads: the ASan build's second half is all debug).
    add("a real plugin cut after its headers", write("libhalf.so", bytes.substr(0, 5000)), NNP_IO_ERROR,
        "a segment lies past the end");
    add("a real plugin cut to 200 bytes", write("libcut.so", bytes.substr(0, 200)), NNP_IO_ERROR,
        "not a loadable shared library");
    add("an entry symbol that is data", corpus("data_entry_plugin"), NNP_INVALID_ARGUMENT, "is data, not a function");
    for (const char* library : {"/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1"})
      if (std::filesystem::exists(library))
        add("a shared library that is no plugin", library, NNP_NOT_FOUND, "exports no nnp_plugin_entry");
    add("a name too long", path(std::string(300, 'n') + ".so"), NNP_IO_ERROR, "File name too long");
    std::string deep = dir_.string();
    while (deep.size() < 5000) deep += "/ddddddddddddddddddddddddddddddddddddddddddddddddd";
    add("a path longer than PATH_MAX", deep + "/libx.so", NNP_IO_ERROR, "File name too long");
    add("a path through a file", path("libtext.so/libx.so"), NNP_IO_ERROR, "cannot be read");
    add("a relative path", "libgood.so", NNP_INVALID_ARGUMENT, "is not absolute");
    if (::geteuid() != 0) {  // root reads anything
      std::string locked = write("liblocked.so", bytes);
      ::chmod(locked.c_str(), 0);
      add("an unreadable file", locked, NNP_IO_ERROR, "Permission denied");
    }
    return cases;
  }
};

}  // namespace

TEST_F(HostilePlugins, EveryBadEntryIsRefusedWithItsReasonEveryTime) {
  std::vector<PluginCase> cases = make_cases();
  for (const PluginCase& c : cases) {
    SCOPED_TRACE(c.label);
    for (int attempt = 0; attempt < 3; ++attempt)  // the same refusal each time: no stale record
      test::expect_error([&] { load_plugin(c.path); }, c.status, {c.fragment});
  }
  std::cout << "class 1, plugin files: " << cases.size() << " cases, each loaded 3 times\n";
}

// The whole folder through discovery in a fresh process: every entry is
// listed, the good one loads, nothing blocks (the FIFO) and the command
// exits 0.
TEST_F(HostilePlugins, DiscoveryOfAFolderOfBadEntriesGoesOn) {
  std::vector<PluginCase> cases = make_cases();
  std::filesystem::create_symlink(corpus("good"), path("libzz_good.so"));
  std::filesystem::create_symlink(corpus("data_entry_plugin"), path("libdata_entry.so"));
  const test::CommandResult run =
      test::run_command("NNP_PLUGIN_PATH=" + dir_.string() + " timeout 60 " + NNPLUG_BINARY + " plugins 2>&1");
  const std::string& output = run.output;
  EXPECT_EQ(run.status, 0) << output;
  EXPECT_NE(output.find("loaded   test.good"), std::string::npos) << output;
  for (const char* reason : {"is a directory", "is a FIFO", "Too many levels of symbolic links", "32-bit ELF",
                             "is built for AArch64", "is data, not a function", "not an ELF file"})
    EXPECT_NE(output.find(reason), std::string::npos) << reason << "\n" << output;
}

// A plugin that keeps its host pointer and registers through it after init,
// or passes a pointer that never was a host: refused, nothing read through it.
TEST_F(HostilePlugins, AHostPointerUsedAfterInitIsRefused) {
  load_plugin(corpus("stale_host_plugin"));
  for (const char* layer : {"stale.RegisterLayerLate", "stale.RegisterBackendLate"})
    test::expect_error([&] { nn::create_layer(layer)(ones({2})); }, NNP_INVALID_ARGUMENT,
                       {"called after its plugin's init returned"});
  test::expect_error([&] { nn::create_layer("stale.ForgedHost")(ones({2})); }, NNP_INVALID_ARGUMENT,
                     {"not one nnplug passed to a plugin's init"});
  for (const nnp_backend_info& info : backends()) EXPECT_NE(std::string(info.name), "stale");
}

// Names, versions, descriptions, docs and attribute names with terminal
// control sequences and newlines reach the terminal escaped.
TEST_F(HostilePlugins, WhatAPluginSaysIsPrintedEscaped) {
  std::filesystem::create_symlink(corpus("control_bytes_plugin"), path("libctl.so"));
  const std::string output =
      test::run_command("NNP_PLUGIN_PATH=" + dir_.string() + " " + NNPLUG_BINARY + " plugins 2>&1").output;
  for (char c : output)
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << static_cast<int>(static_cast<unsigned char>(c));
  EXPECT_NE(output.find("test.ctl\\x1b]0;title\\x07"), std::string::npos) << output;
  EXPECT_NE(output.find("desc\\x0arefused  /etc/passwd"), std::string::npos) << output;
  EXPECT_NE(output.find("beta\\x07: float"), std::string::npos) << output;
  // No line begins with a forged "refused" or "loaded" the plugin wrote.
  EXPECT_EQ(output.find("\nrefused  /etc/passwd"), std::string::npos);
  EXPECT_EQ(output.find("\nloaded   nnplug.cpu forged"), std::string::npos);
}
