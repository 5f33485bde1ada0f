// Caffe's SignalHandler for `taihu-caffe train`: --sigint_effect / --sighup_effect =
// stop|snapshot|none (defaults stop and snapshot, as Caffe's). The handlers only set a
// flag; the solver asks once per iteration (Solver::set_action_function), so a stop
// ends after the current iteration and solve() writes the final snapshot.
// With effect stop, a second SIGINT kills at once (the first has done its part).
// Header-only: one translation unit (commands.cpp) includes it.
#pragma once
#include <csignal>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/solver.hpp"

namespace taihu::caffe::cli {

inline SolverAction parse_signal_effect(const std::string& value, const std::string& flag) {
  if (value == "stop") return SolverAction::stop;
  if (value == "snapshot") return SolverAction::snapshot;
  if (value == "none") return SolverAction::none;
  // Caffe's GetRequestedAction message, with the flag and the choices.
  throw Error("--" + flag + "=" + value + ": Invalid signal effect \"" + value + "\" was specified (stop, snapshot or none)");
}

namespace signal_detail {
inline volatile std::sig_atomic_t got_sigint = 0;
inline volatile std::sig_atomic_t got_sighup = 0;
inline void on_sigint(int) { got_sigint = 1; }
inline void on_sighup(int) { got_sighup = 1; }
}  // namespace signal_detail

// Installs the handlers while alive and restores the previous ones after.
class SignalActions {
 public:
  SignalActions(SolverAction sigint_effect, SolverAction sighup_effect)
      : sigint_effect_(sigint_effect), sighup_effect_(sighup_effect) {
    signal_detail::got_sigint = 0;
    signal_detail::got_sighup = 0;
    install(SIGINT, sigint_effect, signal_detail::on_sigint, &old_int_);
    install(SIGHUP, sighup_effect, signal_detail::on_sighup, &old_hup_);
  }
  ~SignalActions() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
  }
  SignalActions(const SignalActions&) = delete;
  SignalActions& operator=(const SignalActions&) = delete;

  // What the signals received since the last call ask for (stop wins over snapshot).
  SolverAction take() {
    SolverAction a = SolverAction::none;
    if (signal_detail::got_sighup) {
      signal_detail::got_sighup = 0;
      a = sighup_effect_;
    }
    if (signal_detail::got_sigint) {
      signal_detail::got_sigint = 0;
      if (sigint_effect_ > a) a = sigint_effect_;
    }
    return a;
  }

 private:
  static void install(int sig, SolverAction effect, void (*handler)(int), struct sigaction* old) {
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (effect == SolverAction::none) {
      sa.sa_handler = SIG_IGN;
    } else {
      sa.sa_handler = handler;
      if (effect == SolverAction::stop) sa.sa_flags |= SA_RESETHAND;
    }
    sigaction(sig, &sa, old);
  }
  SolverAction sigint_effect_, sighup_effect_;
  struct sigaction old_int_ {}, old_hup_ {};
};

}  // namespace taihu::caffe::cli
