// hangbench: the thin CLI over the hangbench_core library.
#include "cli/commands.hpp"

int main(int argc, char** argv) { return hangbench::cli::run_main(argc, argv); }
