// The declaration the generated catalog source defines (catalog_embed).
#pragma once

#include "hangbench/catalog.hpp"
