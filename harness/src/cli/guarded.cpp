#include "cli/guarded.hpp"

#include <iostream>
#include <stdexcept>

#include "hangbench/matrix.hpp"
#include "hangbench/model.hpp"
#include "hangbench/store.hpp"

namespace hangbench::cli {

int guarded(const std::string& command, const std::function<int()>& body) {
  const std::string prefix = command.empty() ? "hangbench: " : "hangbench " + command + ": ";
  try {
    return body();
  } catch (const ConfigError& e) {
    std::cerr << prefix << "error: " << e.what() << "\n";
    return exit_code::kUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << prefix << "error: " << e.what() << "\n";
    return exit_code::kUsage;
  } catch (const StoreInputError& e) {
    std::cerr << prefix << "error: " << e.what() << "\n";
    return exit_code::kUsage;
  } catch (const StoreError& e) {
    std::cerr << prefix << "store error: " << e.what() << "\n";
    return exit_code::kInfra;
  } catch (const std::exception& e) {
    std::cerr << prefix << "infrastructure error: " << e.what() << "\n";
    return exit_code::kInfra;
  }
}

}  // namespace hangbench::cli
