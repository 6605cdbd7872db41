// A reader for the plain pickles PyTorch's Flight Recorder writes (protocol 2+
// of dicts, lists, tuples, strings, numbers, bools, None): enough to summarise a
// dump without a Python interpreter. Objects of other classes become a string
// naming their class.
#include "inspect/pickle_reader.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>
#include <unordered_map>

namespace hangbench::diagnose {

namespace {

using Json = nlohmann::json;

class Unpickler {
 public:
  explicit Unpickler(const std::string& bytes) : in_(bytes) {}

  Json run() {
    while (at_ < in_.size()) {
      unsigned char op = byte();
      switch (op) {
        case 0x80:
          byte();
          break;  // PROTO
        case 0x95:
          skip(8);
          break;  // FRAME
        case '.':
          return pop();  // STOP
        case '}':
          push(Json::object());
          break;  // EMPTY_DICT
        case ']':
          push(Json::array());
          break;  // EMPTY_LIST
        case ')':
          push(Json::array());
          break;  // EMPTY_TUPLE
        case '(':
          marks_.push_back(stack_.size());
          break;  // MARK
        case 'N':
          push(nullptr);
          break;
        case 0x88:
          push(true);
          break;
        case 0x89:
          push(false);
          break;
        case 'K':
          push(byte());
          break;  // BININT1
        case 'M':
          push(static_cast<int>(little(2)));
          break;  // BININT2
        case 'J':
          push(static_cast<std::int32_t>(little(4)));
          break;  // BININT
        case 0x8a:
          push(long1());
          break;  // LONG1
        case 'G':
          push(binfloat());
          break;
        case 'X':
          push(take(little(4)));
          break;  // BINUNICODE
        case 0x8c:
          push(take(byte()));
          break;  // SHORT_BINUNICODE
        case 0x8d:
          push(take(little(8)));
          break;  // BINUNICODE8
        case 'B':
          push(fmt::format("<{} bytes>", take(little(4)).size()));
          break;
        case 'C':
          push(fmt::format("<{} bytes>", take(byte()).size()));
          break;
        case 'q':
          memo_[byte()] = top();
          break;  // BINPUT
        case 'r':
          memo_[little(4)] = top();
          break;  // LONG_BINPUT
        case 0x94:
          memo_[memo_.size()] = top();
          break;  // MEMOIZE
        case 'h':
          push(memo(byte()));
          break;  // BINGET
        case 'j':
          push(memo(little(4)));
          break;  // LONG_BINGET
        case 0x85:
          tuple(1);
          break;
        case 0x86:
          tuple(2);
          break;
        case 0x87:
          tuple(3);
          break;
        case 't':
          push(since_mark());
          break;  // TUPLE
        case 'a': {
          Json v = pop();
          top().push_back(std::move(v));
          break;
        }  // APPEND
        case 'e': {
          Json items = since_mark();
          for (auto& v : items) top().push_back(std::move(v));
          break;
        }
        case 's': {
          Json v = pop(), k = pop();
          set(top(), k, std::move(v));
          break;
        }            // SETITEM
        case 'u': {  // SETITEMS
          Json items = since_mark();
          for (std::size_t i = 0; i + 1 < items.size(); i += 2) set(top(), items[i], std::move(items[i + 1]));
          break;
        }
        case 'c':
          push("<" + line() + "." + line() + ">");
          break;  // GLOBAL
        case 0x93: {
          Json name = pop(), module = pop();
          push(fmt::format("<{}.{}>", module.dump(), name.dump()));
          break;
        }
        case 'R': {
          pop();
          Json cls = pop();
          push(cls);
          break;
        }  // REDUCE: keep the class name
        case 'b':
          pop();
          break;  // BUILD: state dropped
        default:
          throw std::invalid_argument(fmt::format("unsupported pickle opcode 0x{:02x} at byte {}", op, at_ - 1));
      }
    }
    throw std::invalid_argument("the pickle ends without STOP");
  }

 private:
  unsigned char byte() {
    if (at_ >= in_.size()) throw std::invalid_argument("the pickle is truncated");
    return static_cast<unsigned char>(in_[at_++]);
  }
  void skip(std::size_t n) { take(n); }
  std::string take(std::uint64_t n) {
    if (n > in_.size() - at_) throw std::invalid_argument("the pickle is truncated");
    std::string out = in_.substr(at_, n);
    at_ += n;
    return out;
  }
  std::uint64_t little(int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(byte()) << (8 * i);
    return v;
  }
  Json long1() {
    int n = byte();
    if (n == 0) return 0;
    if (n > 8) return fmt::format("<{}-byte integer>", take(n).size());
    std::uint64_t v = little(n);
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t{0} << (8 * n);  // sign-extend
    return static_cast<std::int64_t>(v);
  }
  double binfloat() {
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 8) | byte();  // big-endian
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string line() {
    auto end = in_.find('\n', at_);
    if (end == std::string::npos) throw std::invalid_argument("the pickle is truncated");
    std::string out = in_.substr(at_, end - at_);
    at_ = end + 1;
    return out;
  }
  void push(Json v) { stack_.push_back(std::move(v)); }
  Json pop() {
    if (stack_.empty()) throw std::invalid_argument("the pickle pops an empty stack");
    Json v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  Json& top() {
    if (stack_.empty()) throw std::invalid_argument("the pickle reads an empty stack");
    return stack_.back();
  }
  Json memo(std::uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) throw std::invalid_argument("the pickle refers to an unknown memo entry");
    return it->second;
  }
  Json since_mark() {
    if (marks_.empty()) throw std::invalid_argument("the pickle has no MARK");
    std::size_t mark = marks_.back();
    marks_.pop_back();
    Json items = Json::array();
    for (std::size_t i = mark; i < stack_.size(); ++i) items.push_back(std::move(stack_[i]));
    stack_.resize(mark);
    return items;
  }
  void tuple(int n) {
    Json items = Json::array();
    for (int i = 0; i < n; ++i) items.insert(items.begin(), pop());
    push(std::move(items));
  }
  static void set(Json& dict, const Json& key, Json value) {
    if (!dict.is_object()) throw std::invalid_argument("the pickle sets an item on something that is not a dict");
    dict[key.is_string() ? key.get<std::string>() : key.dump()] = std::move(value);
  }

  const std::string& in_;
  std::size_t at_ = 0;
  std::vector<Json> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Json> memo_;
};

}  // namespace

nlohmann::json unpickle_plain(const std::string& bytes) { return Unpickler(bytes).run(); }

}  // namespace hangbench::diagnose
