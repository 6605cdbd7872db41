# cmake -DINPUT=file -DOUTPUT=file.c -DSYMBOL=name -P embed_file.cmake
# Writes a C array of the input's bytes (8-byte aligned, as cuModuleLoadData wants).
file(READ ${INPUT} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUTPUT} "/* generated from ${INPUT} */\n__attribute__((aligned(8))) const unsigned char ${SYMBOL}[] = {${bytes}};\n")
