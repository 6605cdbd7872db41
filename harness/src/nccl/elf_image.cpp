#include "nccl/elf_image.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace hangbench::nccl {

struct ElfImage::ElfHandle {
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf) elf_end(elf);
  }
};

ElfImage::ElfImage(const std::string& path) : elf_(std::make_unique<ElfHandle>()) {
  if (elf_version(EV_CURRENT) == EV_NONE) throw std::runtime_error("libelf initialisation failed");
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::invalid_argument(path + ": cannot open: " + std::strerror(errno));
  elf_->elf = elf_begin(fd_, ELF_C_READ, nullptr);
  if (!elf_->elf || elf_kind(elf_->elf) != ELF_K_ELF) {
    ::close(fd_);
    fd_ = -1;
    throw std::invalid_argument(path + ": not an ELF file");
  }
  load_sections();
  dynamic_symbols_ = read_symbols(SHT_DYNSYM);
  static_symbols_ = read_symbols(SHT_SYMTAB);
}

ElfImage::~ElfImage() {
  elf_.reset();
  if (fd_ >= 0) ::close(fd_);
}

bool ElfImage::is_shared_object() const {
  GElf_Ehdr header;
  return gelf_getehdr(elf_->elf, &header) && header.e_type == ET_DYN;
}

bool ElfImage::is_x86_64() const {
  GElf_Ehdr header;
  return gelf_getehdr(elf_->elf, &header) && header.e_machine == EM_X86_64;
}

void ElfImage::load_sections() {
  size_t names_index = 0;
  if (elf_getshdrstrndx(elf_->elf, &names_index) != 0) return;
  for (Elf_Scn* scn = elf_nextscn(elf_->elf, nullptr); scn; scn = elf_nextscn(elf_->elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    const char* name = elf_strptr(elf_->elf, names_index, shdr.sh_name);
    sections_.push_back(
        {name ? name : "", shdr.sh_addr, shdr.sh_offset, shdr.sh_size, shdr.sh_type, shdr.sh_link, elf_ndxscn(scn)});
  }
}

std::vector<ElfSymbol> ElfImage::read_symbols(uint32_t section_type) const {
  std::vector<ElfSymbol> symbols;
  for (const Section& s : sections_) {
    if (s.type != section_type) continue;
    Elf_Scn* scn = elf_getscn(elf_->elf, s.index);
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    const size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      const char* name = elf_strptr(elf_->elf, s.link, sym.st_name);
      if (!name || !*name) continue;
      std::string clean = name;
      if (auto at = clean.find('@'); at != std::string::npos) clean.resize(at);  // drop @GLIBC_x
      symbols.push_back({clean, sym.st_value, sym.st_size, sym.st_shndx != SHN_UNDEF});
    }
  }
  return symbols;
}

std::optional<ElfSymbol> ElfImage::find_function(const std::string& name) const {
  // NCCL is C++: its internal functions carry Itanium-mangled names such as
  // _Z15ncclSocketCloseP10ncclSocket, so the plain name matches those too.
  const std::string mangled_prefix = "_Z" + std::to_string(name.size()) + name;
  for (const auto* table : {&static_symbols_, &dynamic_symbols_}) {
    for (const ElfSymbol& sym : *table) {
      if (!sym.defined || sym.size == 0) continue;
      if (sym.name == name || sym.name.rfind(mangled_prefix, 0) == 0) return sym;
    }
  }
  return std::nullopt;
}

std::vector<unsigned char> ElfImage::read_section(const Section& s) const {
  if (s.type == SHT_NOBITS) return {};
  Elf_Data* data = elf_getdata(elf_getscn(elf_->elf, s.index), nullptr);
  if (!data || !data->d_buf) return {};
  const auto* begin = static_cast<const unsigned char*>(data->d_buf);
  return {begin, begin + data->d_size};
}

std::vector<unsigned char> ElfImage::bytes_at(uint64_t address, uint64_t size) const {
  for (const Section& s : sections_) {
    if (s.address == 0 || address < s.address || address + size > s.address + s.size) continue;
    std::vector<unsigned char> all = read_section(s);
    if (all.size() < address - s.address + size) return {};
    auto first = all.begin() + static_cast<std::ptrdiff_t>(address - s.address);
    return {first, first + static_cast<std::ptrdiff_t>(size)};
  }
  return {};
}

std::string ElfImage::section_contents(const std::string& name) const {
  std::string out;
  for (const Section& s : sections_) {
    if (s.name.rfind(name, 0) != 0) continue;
    std::vector<unsigned char> bytes = read_section(s);
    out.append(bytes.begin(), bytes.end());
  }
  return out;
}

std::optional<SectionSpan> ElfImage::section_span(const std::string& name) const {
  for (const Section& s : sections_)
    if (s.name == name) return SectionSpan{s.offset, s.size, s.type != SHT_NOBITS};
  return std::nullopt;
}

std::vector<uint64_t> ElfImage::got_slots_for(const std::string& symbol) const {
  std::vector<uint64_t> slots;
  for (const Section& s : sections_) {
    if (s.type != SHT_RELA && s.type != SHT_REL) continue;
    // Only relocations that resolve against the dynamic symbol table.
    auto symtab = std::find_if(sections_.begin(), sections_.end(), [&](const Section& t) { return t.index == s.link; });
    if (symtab == sections_.end() || symtab->type != SHT_DYNSYM) continue;
    Elf_Scn* scn = elf_getscn(elf_->elf, s.index);
    Elf_Data* data = elf_getdata(scn, nullptr);
    Elf_Data* symdata = elf_getdata(elf_getscn(elf_->elf, symtab->index), nullptr);
    if (!data || !symdata) continue;
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    const size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
    for (size_t i = 0; i < count; ++i) {
      uint64_t offset = 0, info = 0;
      if (s.type == SHT_RELA) {
        GElf_Rela rela;
        if (!gelf_getrela(data, static_cast<int>(i), &rela)) continue;
        offset = rela.r_offset, info = rela.r_info;
      } else {
        GElf_Rel rel;
        if (!gelf_getrel(data, static_cast<int>(i), &rel)) continue;
        offset = rel.r_offset, info = rel.r_info;
      }
      GElf_Sym sym;
      if (GELF_R_SYM(info) == 0 || !gelf_getsym(symdata, static_cast<int>(GELF_R_SYM(info)), &sym)) continue;
      const char* name = elf_strptr(elf_->elf, symtab->link, sym.st_name);
      if (name && symbol == name) slots.push_back(offset);
    }
  }
  return slots;
}

std::vector<uint64_t> ElfImage::plt_stubs_for(const std::vector<uint64_t>& got_slots) const {
  // A stub is `jmp *disp32(%rip)` (ff 25), possibly after `bnd` (f2) or
  // `endbr64`; its target slot is the address after the instruction + disp32.
  std::vector<uint64_t> stubs;
  for (const Section& s : sections_) {
    if (s.name != ".plt" && s.name != ".plt.sec" && s.name != ".plt.got") continue;
    std::vector<unsigned char> code = read_section(s);
    for (size_t i = 0; i + 6 <= code.size(); ++i) {
      if (code[i] != 0xff || code[i + 1] != 0x25) continue;
      int32_t disp;
      std::memcpy(&disp, &code[i + 2], 4);
      const uint64_t next_ip = s.address + i + 6;
      const uint64_t slot = next_ip + static_cast<int64_t>(disp);
      if (std::find(got_slots.begin(), got_slots.end(), slot) == got_slots.end()) continue;
      // Callers target the stub's first byte: step back over `bnd` and `endbr64`.
      size_t start = i;
      if (start >= 1 && code[start - 1] == 0xf2) --start;
      static const unsigned char kEndbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
      if (start >= 4 && std::memcmp(&code[start - 4], kEndbr64, 4) == 0) start -= 4;
      stubs.push_back(s.address + start);
    }
  }
  return stubs;
}

}  // namespace hangbench::nccl
