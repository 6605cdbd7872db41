// Read-only view of an ELF file through libelf: its symbols, sections and
// PLT/GOT wiring, enough to tell which functions call which imports.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hangbench::nccl {

// Where a section's bytes lie in the file.
struct SectionSpan {
  uint64_t offset = 0, size = 0;
  bool has_file_bytes = false;  // false for SHT_NOBITS
};

struct ElfSymbol {
  std::string name;
  uint64_t address = 0;  // st_value
  uint64_t size = 0;     // st_size
  bool defined = false;  // st_shndx != SHN_UNDEF
};

class ElfImage {
 public:
  // Throws std::invalid_argument when `path` is not a readable ELF file.
  explicit ElfImage(const std::string& path);
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  bool is_shared_object() const;  // ET_DYN
  bool is_x86_64() const;
  bool has_symtab() const { return !static_symbols_.empty(); }
  const std::vector<ElfSymbol>& dynamic_symbols() const { return dynamic_symbols_; }
  const std::vector<ElfSymbol>& static_symbols() const { return static_symbols_; }
  std::optional<ElfSymbol> find_function(const std::string& name) const;  // .symtab, then .dynsym

  // Bytes mapped at [address, address+size) from the section holding them.
  std::vector<unsigned char> bytes_at(uint64_t address, uint64_t size) const;
  // Contents of every section with this name prefix concatenated (e.g. ".rodata").
  std::string section_contents(const std::string& name) const;

  // The first section called exactly `name`, if any.
  std::optional<SectionSpan> section_span(const std::string& name) const;

  // GOT slots that the dynamic linker fills with `symbol` (JUMP_SLOT and GLOB_DAT).
  std::vector<uint64_t> got_slots_for(const std::string& symbol) const;
  // PLT stubs (.plt, .plt.sec) that jump through one of `got_slots`.
  std::vector<uint64_t> plt_stubs_for(const std::vector<uint64_t>& got_slots) const;

 private:
  struct Section {
    std::string name;
    uint64_t address = 0, offset = 0, size = 0;
    uint32_t type = 0;
    uint32_t link = 0;
    size_t index = 0;
  };
  void load_sections();
  std::vector<ElfSymbol> read_symbols(uint32_t section_type) const;
  std::vector<unsigned char> read_section(const Section& s) const;

  int fd_ = -1;
  struct ElfHandle;
  std::unique_ptr<ElfHandle> elf_;
  std::vector<Section> sections_;
  std::vector<ElfSymbol> dynamic_symbols_, static_symbols_;
};

}  // namespace hangbench::nccl
