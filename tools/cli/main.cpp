// smdebug: inspect, check, plot and report smdebug trials (local folders or s3://bucket/prefix).
// Every command is one row of `commands` below: its name, a one-line summary, its full usage
// text, the options taking a value, the flag options, and the function running it.
// Exit codes: 0 success, 1 bad data found, 2 usage error, unreadable path, not a trial, or an
// unknown tensor/step/collection. Errors are one line on stderr, `smdebug <command>: <message>`
// (cli::print_error).
#include <algorithm>
#include <cstring>
#include <iostream>
#include <new>
#include <span>
#include <string>

#include <smdebug/net/transport_errors.hpp>

#include <smdebug/smdebug.hpp>

#include "args.hpp"
#include "common_options.hpp"
#include "compact.hpp"
#include "diagnose.hpp"
#include "diff.hpp"
#include "dump.hpp"
#include "errors.hpp"
#include "export.hpp"
#include "format.hpp"
#include "inspect.hpp"
#include "monitor.hpp"
#include "output_file.hpp"
#include "plot.hpp"
#include "reductions.hpp"
#include "report.hpp"
#include "rule.hpp"
#include "session.hpp"
#include "summary.hpp"
#include "unknown_tensor.hpp"
#include "value.hpp"
#include "verify.hpp"
#include "watch.hpp"

#ifndef SMDEBUG_WITHOUT_SERVE  // -DSMDEBUG_SERVE=OFF (tools/serve/serve.cmake)
namespace cli {  // tools/cli/serve.cpp: its own TU, the only one with Boost.Beast
extern const char* const serve_usage;
int run_serve(Session& session, int argc, char** argv);
}  // namespace cli
#endif

namespace {

struct Command {
    const char* name;
    const char* summary;
    const char* usage;
    std::vector<std::string> with_value;
    std::vector<std::string> flags;
    int (*run)(cli::Session&, const cli::Args&);
    int (*run_raw)(cli::Session&, int, char**) = nullptr;  // commands that parse their own repeated options
};

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"summary", "workers, modes, steps, collections and tensors", cli::summary_usage, {}, {"--json", "--latest"}, cli::run_summary},
        {"tensors", "tensor names (filter by regex, collection, step)", cli::tensors_usage, {"--regex", "--collection", "--step", "--mode"}, {}, cli::run_tensors},
        {"steps", "steps with their mode and mode step", cli::steps_usage, {"--mode"}, {"--all"}, cli::run_steps},
        {"collections", "collections and their tensor counts", cli::collections_usage, {}, {}, cli::run_collections},
        {"workers", "workers and how many steps each wrote", cli::workers_usage, {}, {}, cli::run_workers},
        {"value", "a tensor's value at a step (text, json or .npy)", cli::value_usage, {"--mode", "--worker", "--format", "--out"}, {"--full"}, cli::run_value},
        {"reductions", "a tensor's reductions, a column per step", cli::reductions_usage, {"--reduction", "--mode", "--worker"}, {"--abs", "--precise", "--json"}, cli::run_reductions},
        {"shapes", "a tensor's shape at each step", cli::shapes_usage, {"--mode", "--worker"}, {}, cli::run_shapes},
        {"dump", "everything the trial holds, as JSON", cli::dump_usage, {}, {"--json", "--values"}, cli::run_dump},
        {"verify", "read and check every record; report the read rate", cli::verify_usage, {"--reduction"}, {"--abs"}, cli::run_verify},
        {"diagnose", "where training went wrong: first non-finite value, rule findings", cli::diagnose_usage, {}, {"--json"}, cli::run_diagnose},
        {"diff", "where two runs part: first differing step and tensor", cli::diff_usage, {"--rtol", "--atol"}, {"--json"}, cli::run_diff},
        {"compact", "write the trial's manifests (a compacted index)", cli::compact_usage, {}, {"--remove"}, cli::run_compact},
        {"watch", "follow a running job step by step", cli::watch_usage, {"--tensor", "--reduction", "--mode"}, {"--abs", "--wait"}, cli::run_watch},
        {"plot", "SVG line chart of reductions, or a histogram", cli::plot_usage, {"--tensor", "--reduction", "--mode", "--out", "--hist", "--step", "--bins"}, {"--abs", "--log"}, cli::run_plot},
        {"report", "self-contained HTML report of a trial", cli::report_usage, {"--out", "--reduction", "--max-tensors", "--rule"}, {"--abs"},
         [](cli::Session& session, const cli::Args& args) { return cli::run_report(session, args, cli::run_report_rules); }},
        {"export", "to csv, jsonl, npz, safetensors or TensorBoard files", cli::export_usage, {"--format", "--out", "--step", "--mode", "--worker", "--reduction", "--tensor", "--histograms"}, {"--abs"}, cli::run_export},
        {"rule", "run a built-in rule; exit 1 when it fires", cli::rule_usage, {}, {}, nullptr, cli::run_rule},
        {"monitor", "follow a running job: rules, actions, metrics", cli::monitor_usage, {}, {}, nullptr, cli::run_monitor},
#ifndef SMDEBUG_WITHOUT_SERVE
        {"serve", "live view of trials in the browser (JSON API too)", cli::serve_usage, {}, {}, nullptr, cli::run_serve},
#endif
        {"rules", "list the built-in rules, their parameters and defaults", cli::rules_usage, {}, {}, nullptr, [](cli::Session&, int, char**) { return cli::run_rules_list(); }},
    };
    return table;
}

void print_usage(std::ostream& out) {
    out << "usage: smdebug <command> PATH [options]     (smdebug <command> --help for details; smdebug --version)\n\ncommands:\n";
    for (const auto& c : commands()) {
        std::string name = c.name;
        name.resize(13, ' ');
        out << "  " << name << c.summary << "\n";
    }
    out << "\nPATH is a trial folder or s3://bucket/prefix (credentials and endpoint from the AWS environment).\n"
           "Every command takes --connect-timeout S and --read-timeout S for S3 (defaults 10 and 20 s; attempts:\n"
           "AWS_MAX_ATTEMPTS, AWS_RETRY_MODE); --max-concurrency N: S3 requests in flight at most (default 64, or the\n"
           "profile's s3.max_concurrent_requests); --steps A:B (also A: or :B) to load only global steps A to B-1 (only\n"
           "the index files of those steps are listed and read); --requests: print the requests sent at the end, on\n"
           "stderr (\"requests: LIST n, GET n, HEAD n; bytes n\"); --cache DIR [--cache-max-bytes N, default 1 GiB]: keep\n"
           "the S3 objects read in DIR (SMDEBUG_CACHE_DIR, SMDEBUG_CACHE_MAX_BYTES).\n"
           "Old spellings still accepted: --reduce (now --reduction), `rule NAME PATH` (now `rule PATH NAME`).\n"
           "exit codes: 0 success; 1 bad data found; 2 usage error, unreadable path, not a trial,\n"
           "            or an unknown tensor, step or collection.\n";
}

// The messages of the library's "not there" errors, completed with what the trial does hold:
// the closest tensor names, the steps a tensor was saved at, the last step of the mode.
std::string unknown_tensor_text(cli::Session& session, const smdebug::TensorUnavailable& e) {
    if (auto* trial = session.last_trial()) {
        try {
            return cli::unknown_tensor_message(*trial, e.tensor);
        } catch (const std::exception&) {
        }
    }
    return "unknown tensor '" + e.tensor + "'";
}

std::string tensor_step_text(cli::Session& session, const smdebug::TensorUnavailableForStep& e) {
    using namespace smdebug;
    std::string m = "tensor " + e.tensor + (e.reduction.empty() ? "" : " (reduction " + e.reduction + ")") + " was not saved at " +
                    (e.mode == Mode::GLOBAL ? "step " : std::string(mode_name(e.mode)) + " step ") + std::to_string(e.step);
    if (e.has_reductions) m += ". Only its reductions were saved at this step: `smdebug reductions` shows them";
    if (auto* trial = session.last_trial()) {
        try {
            const auto steps = trial->tensor(e.tensor).steps(e.mode);
            if (!steps.empty())
                m += ". Its " + std::string(e.mode == Mode::GLOBAL ? "" : std::string(mode_name(e.mode)) + " ") +
                     "steps with data (a value or reductions): " + cli::steps_text(steps);
        } catch (const std::exception&) {
        }
    }
    return m;
}

std::string step_text(cli::Session& session, const smdebug::StepUnavailable& e) {
    using namespace smdebug;
    std::string m = "step " + std::to_string(e.step) + " of mode " + std::string(mode_name(e.mode)) + " is not available (not saved)";
    if (auto* trial = session.last_trial()) {
        try {
            const auto steps = trial->steps(e.mode, true);
            if (steps.empty()) m += "; the trial has no " + std::string(e.mode == Mode::GLOBAL ? "" : std::string(mode_name(e.mode)) + " ") + "steps";
            else m += "; the " + std::string(mode_name(e.mode)) + " steps are " + cli::steps_text(steps) + ", the last is " + std::to_string(steps.back());
        } catch (const std::exception&) {
        }
    }
    return m;
}

// Runs the command in `session` (main has taken the common options out of argv).
int run(cli::Session& session, const Command& c, int argc, char** argv) {
    if (c.run_raw) return c.run_raw(session, argc, argv);
    const auto fail = [&session](int code, const std::string& message) {
        session.print_error(message);
        return code;
    };
    try {
        return c.run(session, cli::Args::parse(argc, argv, 2, c.with_value, c.flags));
    } catch (const cli::CliError& e) {
        const std::string_view message = e.what();  // one line: the usage text stays with --help
        return fail(e.code, std::string(message.substr(0, message.find('\n'))));
    } catch (const smdebug::TensorUnavailable& e) {
        return fail(cli::usage, unknown_tensor_text(session, e));
    } catch (const smdebug::TensorUnavailableForStep& e) {
        return fail(cli::usage, tensor_step_text(session, e));
    } catch (const smdebug::StepUnavailable& e) {
        return fail(cli::usage, step_text(session, e));
    } catch (const smdebug::InvalidWorker& e) {
        std::string m = std::string("unknown worker: ") + e.what();
        if (auto* trial = session.last_trial()) {
            try {
                m += cli::did_you_mean(e.worker, trial->workers());
            } catch (const std::exception&) {
            }
        }
        return fail(cli::usage, m);
    } catch (const smdebug::InvalidIndexValue& e) {  // a trial's index file holds a value the reader refuses
        return fail(cli::bad_data, std::string("bad data: ") + e.what());
    } catch (const smdebug::SMDebugValueError& e) {  // e.g. a bad regular expression
        return fail(cli::usage, e.what());
    } catch (const smdebug::StorageError& e) {
        return fail(cli::usage, std::string("cannot read: ") + e.what());
    } catch (const smdebug::TruncatedResponse& e) {  // the network's failure, not the trial's data
        return fail(cli::usage, std::string("cannot read: ") + e.what());
    } catch (const smdebug::XmlError& e) {  // a server's answer that does not parse
        return fail(cli::usage, std::string("cannot read: ") + e.what());
    } catch (const smdebug::SMDebugCustomerError& e) {  // a bad setting: AWS profile, endpoint, retry mode
        return fail(cli::usage, e.what());
    } catch (const smdebug::MissingCollectionFiles& e) {
        return fail(cli::usage, std::string("not a trial: ") + e.what());
    } catch (const smdebug::FormatError& e) {
        return fail(cli::bad_data, std::string("bad data: ") + e.what());
    } catch (const smdebug::IndexReaderException& e) {
        return fail(cli::bad_data, std::string("bad data: ") + e.what());
    } catch (const smdebug::SMDebugError& e) {
        return fail(cli::bad_data, std::string(e.python_name()) + ": " + e.what());
    } catch (const std::bad_alloc&) {
        return fail(cli::usage, "out of memory");
    } catch (const std::exception& e) {  // never an abort: one line and the "cannot do it" code
        return fail(cli::usage, e.what());
    }
}

// A full disk or a closed descriptor on standard output is a failure (exit 2), never a silent success.
int finish(std::string_view command, int code) {
    try {
        cli::check_stdout();
    } catch (const cli::CliError& e) {
        cli::print_error(command, e.what());
        return std::max<int>(code, cli::usage);
    }
    return code;
}

// The command `c` with its arguments: --help, or the common options taken out of argv (a usage
// error for a bad one), then the command in a session that owns what it opens and is ended (its
// trials closed, their threads joined) before the process exits.
int run_command(const Command& c, int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::cout << c.usage;
            return finish(c.name, cli::ok);
        }
    cli::CommonOptions options;
    try {
        options = cli::take_common_options(argc, argv);
    } catch (const cli::CliError& e) {
        cli::print_error(c.name, e.what());
        return e.code;
    }
    cli::Session session(c.name, std::move(options));
    const int code = run(session, c, argc, argv);
    session.print_request_counts();
    return finish(c.name, code);
}

std::vector<std::string> command_names() {
    std::vector<std::string> out;
    for (const auto& c : commands()) out.push_back(c.name);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        print_usage(std::cerr);
        return cli::usage;
    }
    const std::string name = argv[1];
    if (name == "-h" || name == "--help" || name == "help") {
        if (argc > 2)
            for (const auto& c : commands())
                if (c.name == std::string_view(argv[2])) return std::cout << c.usage, finish({}, cli::ok);
        print_usage(std::cout);
        return finish({}, cli::ok);
    }
    if (name == "--version" || name == "-V") {
        std::cout << "smdebug " << SMDEBUG_VERSION_TEXT << "\n";
        return finish({}, cli::ok);
    }
    if (name == "--commands") {  // for shell completion
        for (const auto& c : commands()) std::cout << c.name << "\n";
        return finish({}, cli::ok);
    }
    for (const auto& c : commands())
        if (c.name == name) return run_command(c, argc, argv);
    cli::print_error({}, "unknown command '" + name + "'" + cli::did_you_mean(name, command_names()) + " (smdebug --help lists them)");
    return cli::usage;
}
