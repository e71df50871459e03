// lockprof: why is this lock slow on this CPU? All work happens in cli/ and below.
#include "cli/cli.hpp"

int main(int argc, char** argv) {
    return lockprof::cli::main(argc, argv);
}
