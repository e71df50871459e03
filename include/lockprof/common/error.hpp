// Errors carried to main as exceptions, printed there as one line: "lockprof: <message>".
// UsageError (bad options, bad input files) exits 2; Error (something failed while working)
// exits 1. Messages say what failed, why, and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace lockprof {

class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
    virtual int exit_code() const { return 1; }
};

class UsageError : public Error {
  public:
    explicit UsageError(const std::string& message) : Error(message) {}
    int exit_code() const override { return 2; }
};

// A run that stopped making progress (broken lock, starved thread); exit 3.
class StallError : public Error {
  public:
    explicit StallError(const std::string& message) : Error(message) {}
    int exit_code() const override { return 3; }
};

}  // namespace lockprof
