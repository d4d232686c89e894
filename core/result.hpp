// Result<T>: a value or an error message meant for the user.
//
// Errors users can cause (bad files, bad options) travel as values, LLVM-style,
// so that callers decide whether to print, skip or abort. The message names the
// file or option and says what to do; it is complete on its own.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace stacksage {

struct Error {
    std::string message;
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : state_(std::move(value)) {}
    Result(Error error) : state_(std::move(error)) {}

    explicit operator bool() const { return std::holds_alternative<T>(state_); }
    bool ok() const { return std::holds_alternative<T>(state_); }

    T& value() & { return std::get<T>(state_); }
    const T& value() const& { return std::get<T>(state_); }
    T&& value() && { return std::get<T>(std::move(state_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<Error>(state_); }

private:
    std::variant<T, Error> state_;
};

// For operations that only succeed or fail.
struct Ok {};
using Status = Result<Ok>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace stacksage
