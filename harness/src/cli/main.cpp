// hangbench: the thin CLI over the layers of the harness (harness/layers.txt).
#include "cli/commands.hpp"

int main(int argc, char** argv) { return hangbench::cli::run_main(argc, argv); }
