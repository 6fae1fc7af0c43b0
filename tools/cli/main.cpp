// smdebug: inspect, check, plot and report smdebug trials (local folders or s3://bucket/prefix).
// Every command is one row of `commands` below: its name, a one-line summary, its full usage
// text, the options taking a value, the flag options, and the function running it.
// Exit codes: 0 success, 1 bad data found, 2 usage error, unreadable path, not a trial, or an
// unknown tensor/step/collection. Errors are one line on stderr, starting with "smdebug: ".
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <span>
#include <string>

#include <smdebug/net/transport_errors.hpp>

#include "common.hpp"
#include "compact.hpp"
#include "dump.hpp"
#include "export.hpp"
#include "inspect.hpp"
#include "monitor.hpp"
#include "output_file.hpp"
#include "plot.hpp"
#include "reductions.hpp"
#include "report.hpp"
#include "rule.hpp"
#include "summary.hpp"
#include "value.hpp"
#include "verify.hpp"
#include "watch.hpp"

namespace {

struct Command {
    const char* name;
    const char* summary;
    const char* usage;
    std::vector<std::string> with_value;
    std::vector<std::string> flags;
    int (*run)(const cli::Args&);
    int (*run_raw)(int, char**) = nullptr;  // commands that parse their own repeated options
};

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"summary", "workers, modes, steps, collections and tensors", cli::summary_usage, {}, {"--json", "--latest"}, cli::run_summary},
        {"tensors", "tensor names (filter by regex, collection, step)", cli::tensors_usage, {"--regex", "--collection", "--step", "--mode"}, {}, cli::run_tensors},
        {"steps", "steps with their mode and mode step", cli::steps_usage, {"--mode"}, {"--all"}, cli::run_steps},
        {"collections", "collections and their tensor counts", cli::collections_usage, {}, {}, cli::run_collections},
        {"workers", "workers and how many steps each wrote", cli::workers_usage, {}, {}, cli::run_workers},
        {"value", "a tensor's value at a step (text, json or .npy)", cli::value_usage, {"--mode", "--worker", "--format", "--out"}, {}, cli::run_value},
        {"reductions", "a tensor's reductions, a column per step", cli::reductions_usage, {"--reduction", "--mode", "--worker"}, {"--abs"}, cli::run_reductions},
        {"shapes", "a tensor's shape at each step", cli::shapes_usage, {"--mode", "--worker"}, {}, cli::run_shapes},
        {"dump", "everything the trial holds, as JSON", cli::dump_usage, {}, {"--json", "--values"}, cli::run_dump},
        {"verify", "read and check every record; report the read rate", cli::verify_usage, {"--reduce"}, {"--abs"}, cli::run_verify},
        {"compact", "write the trial's manifests (a compacted index)", cli::compact_usage, {}, {"--remove"}, cli::run_compact},
        {"watch", "follow a running job step by step", cli::watch_usage, {"--tensor", "--reduce"}, {"--abs"}, cli::run_watch},
        {"plot", "SVG line chart of reductions, or a histogram", cli::plot_usage, {"--tensor", "--reduction", "--mode", "--out", "--hist", "--step", "--bins"}, {"--abs", "--log"}, cli::run_plot},
        {"report", "self-contained HTML report of a trial", cli::report_usage, {"--out", "--reduction", "--max-tensors"}, {"--abs"}, cli::run_report},
        {"export", "to csv, jsonl, npz, safetensors or TensorBoard files", cli::export_usage, {"--format", "--out", "--step", "--mode", "--worker", "--reduction", "--tensor", "--histograms"}, {"--abs"}, cli::run_export},
        {"rule", "run a built-in rule; exit 1 when it fires", cli::rule_usage, {}, {}, nullptr, cli::run_rule},
        {"monitor", "follow a running job: rules, actions, metrics", cli::monitor_usage, {}, {}, nullptr, cli::run_monitor},
        {"rules", "list the built-in rules, their parameters and defaults", cli::rules_usage, {}, {}, nullptr, [](int, char**) { return cli::run_rules_list(); }},
    };
    return table;
}

void print_usage(std::ostream& out) {
    out << "usage: smdebug <command> PATH [options]     (smdebug <command> --help for details)\n\ncommands:\n";
    for (const auto& c : commands()) {
        std::string name = c.name;
        name.resize(13, ' ');
        out << "  " << name << c.summary << "\n";
    }
    out << "\nPATH is a trial folder or s3://bucket/prefix (credentials and endpoint from the AWS environment).\n"
           "Every command takes --connect-timeout S and --read-timeout S for S3 (defaults 10 and 20 s; attempts:\n"
           "AWS_MAX_ATTEMPTS, AWS_RETRY_MODE); --steps A:B (also A: or :B) to load only global steps A to B-1 (only\n"
           "the index files of those steps are listed and read); --requests: print the requests sent at the end, on\n"
           "stderr (\"requests: LIST n, GET n, HEAD n; bytes n\"); --cache DIR [--cache-max-bytes N, default 1 GiB]: keep\n"
           "the S3 objects read in DIR (SMDEBUG_CACHE_DIR, SMDEBUG_CACHE_MAX_BYTES).\n"
           "exit codes: 0 success; 1 bad data found; 2 usage error, unreadable path, not a trial,\n"
           "            or an unknown tensor, step or collection.\n";
}

// --cache DIR and --cache-max-bytes N (any command) at argv[i]: handed to the trial's opening
// through SMDEBUG_CACHE_DIR / SMDEBUG_CACHE_MAX_BYTES (smdebug::open_trial_store). Returns 1 when
// argv[i] (and its value) was one, 0 when not, -1 (after a message) on a bad value.
int take_cache_option(const Command& c, int argc, char** argv, int& i) {
    for (const std::string_view flag : {"--cache", "--cache-max-bytes"}) {
        const std::string_view a = argv[i];
        std::string value;
        if (a == flag) {
            if (i + 1 >= argc) {
                std::cerr << "smdebug " << c.name << ": " << flag << " needs a value\n";
                return -1;
            }
            value = argv[++i];
        } else if (a.starts_with(flag) && a.size() > flag.size() && a[flag.size()] == '=') {
            value = std::string(a.substr(flag.size() + 1));
        } else {
            continue;
        }
        if (flag == "--cache") {
            if (value.empty()) {
                std::cerr << "smdebug " << c.name << ": --cache needs a folder\n";
                return -1;
            }
            ::setenv("SMDEBUG_CACHE_DIR", value.c_str(), 1);
        } else {
            char* end = nullptr;
            errno = 0;
            const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
            if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE || v == 0 || v > (1ull << 62)) {
                std::cerr << "smdebug " << c.name << ": --cache-max-bytes must be a number of bytes from 1 to 2^62, not '" << value << "'\n";
                return -1;
            }
            ::setenv("SMDEBUG_CACHE_MAX_BYTES", std::to_string(v).c_str(), 1);
        }
        return 1;
    }
    return 0;
}

// --connect-timeout S and --read-timeout S (any command; as the AWS CLI's --cli-connect-timeout and
// --cli-read-timeout): taken out of argv and handed to the S3 client through SMDEBUG_S3_CONNECT_TIMEOUT /
// SMDEBUG_S3_READ_TIMEOUT. Also --requests (any command): count the requests the command sends
// (cli::print_request_counts), and the cache options (take_cache_option). Returns false (after a message) on a bad value.
bool take_network_options(const Command& c, int& argc, char** argv) {
    static const std::pair<std::string_view, const char*> options[] = {{"--connect-timeout", "SMDEBUG_S3_CONNECT_TIMEOUT"},
                                                                       {"--read-timeout", "SMDEBUG_S3_READ_TIMEOUT"}};
    int out = 2;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--requests") {
            cli::request_counting().enabled = true;
            continue;
        }
        if (const auto taken = take_cache_option(c, argc, argv, i); taken != 0) {
            if (taken < 0) return false;
            continue;
        }
        const char* variable = nullptr;
        std::string value;
        for (const auto& [flag, var] : options) {
            if (a == flag && i + 1 < argc) {
                variable = var;
                value = argv[++i];
            } else if (a.starts_with(flag) && a.size() > flag.size() && a[flag.size()] == '=') {
                variable = var;
                value = std::string(a.substr(flag.size() + 1));
            } else if (a == flag) {
                std::cerr << "smdebug " << c.name << ": " << flag << " needs a number of seconds\n";
                return false;
            }
            if (variable) {
                char* end = nullptr;
                const long v = std::strtol(value.c_str(), &end, 10);
                if (value.empty() || *end != '\0' || v < 1 || v > 86400) {
                    std::cerr << "smdebug " << c.name << ": " << flag << " must be a number of seconds from 1 to 86400, not '"
                              << value << "'\n";
                    return false;
                }
                ::setenv(var, std::to_string(v).c_str(), 1);
                break;
            }
        }
        if (!variable) argv[out++] = argv[i];
    }
    argc = out;
    return true;
}

// --steps A:B (any command that opens a trial): taken out of argv into cli::step_range_option().
// Returns false (after a message) on a bad value.
bool take_steps_option(const Command& c, int& argc, char** argv) {
    constexpr std::string_view flag = "--steps";
    int out = 2;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        std::optional<std::string> value;
        if (a == flag) {
            if (i + 1 >= argc) {
                std::cerr << "smdebug " << c.name << ": --steps needs a range A:B\n";
                return false;
            }
            value = argv[++i];
        } else if (a.starts_with(flag) && a.size() > flag.size() && a[flag.size()] == '=') {
            value = std::string(a.substr(flag.size() + 1));
        }
        if (!value) {
            argv[out++] = argv[i];
            continue;
        }
        try {
            cli::step_range_option() = cli::parse_step_range(*value);
        } catch (const cli::CliError& e) {
            std::cerr << "smdebug " << c.name << ": " << cli::printable(e.what()) << "\n";
            return false;
        }
    }
    argc = out;
    return true;
}

int run(const Command& c, int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::cout << c.usage;
            return cli::ok;
        }
    if (!take_network_options(c, argc, argv) || !take_steps_option(c, argc, argv)) return cli::usage;
    if (c.run_raw) return c.run_raw(argc, argv);
    try {
        return c.run(cli::Args::parse(argc, argv, 2, c.with_value, c.flags));
    } catch (const cli::CliError& e) {
        const std::string_view message = e.what();  // one line: the usage text stays with --help
        std::cerr << "smdebug " << c.name << ": " << cli::printable(message.substr(0, message.find('\n'))) << "\n";
        return e.code;
    } catch (const smdebug::TensorUnavailable& e) {
        std::cerr << "smdebug " << c.name << ": unknown tensor: " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::TensorUnavailableForStep& e) {
        std::cerr << "smdebug " << c.name << ": " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::StepUnavailable& e) {
        std::cerr << "smdebug " << c.name << ": " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::InvalidWorker& e) {
        std::cerr << "smdebug " << c.name << ": unknown worker: " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::InvalidIndexValue& e) {  // a trial's index file holds a value the reader refuses
        std::cerr << "smdebug " << c.name << ": bad data: " << cli::printable(e.what()) << "\n";
        return cli::bad_data;
    } catch (const smdebug::SMDebugValueError& e) {  // e.g. a bad regular expression
        std::cerr << "smdebug " << c.name << ": " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::StorageError& e) {
        std::cerr << "smdebug " << c.name << ": cannot read: " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::TruncatedResponse& e) {  // the network's failure, not the trial's data
        std::cerr << "smdebug " << c.name << ": cannot read: " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::XmlError& e) {  // a server's answer that does not parse
        std::cerr << "smdebug " << c.name << ": cannot read: " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::SMDebugCustomerError& e) {  // a bad setting: AWS profile, endpoint, retry mode
        std::cerr << "smdebug " << c.name << ": " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::MissingCollectionFiles& e) {
        std::cerr << "smdebug " << c.name << ": not a trial: " << cli::printable(e.what()) << "\n";
        return cli::usage;
    } catch (const smdebug::FormatError& e) {
        std::cerr << "smdebug " << c.name << ": bad data: " << cli::printable(e.what()) << "\n";
        return cli::bad_data;
    } catch (const smdebug::IndexReaderException& e) {
        std::cerr << "smdebug " << c.name << ": bad data: " << cli::printable(e.what()) << "\n";
        return cli::bad_data;
    } catch (const smdebug::SMDebugError& e) {
        std::cerr << "smdebug " << c.name << ": " << e.python_name() << ": " << cli::printable(e.what()) << "\n";
        return cli::bad_data;
    } catch (const std::bad_alloc&) {
        std::cerr << "smdebug " << c.name << ": out of memory\n";
        return cli::usage;
    } catch (const std::exception& e) {  // never an abort: one line and the "cannot do it" code
        std::cerr << "smdebug " << c.name << ": " << cli::printable(e.what()) << "\n";
        return cli::usage;
    }
}

// A full disk or a closed descriptor on standard output is a failure (exit 2), never a silent success.
int finish(const std::string& command, int code) {
    try {
        cli::check_stdout();
    } catch (const cli::CliError& e) {
        std::cerr << "smdebug" << command << ": " << cli::printable(e.what()) << "\n";
        return std::max<int>(code, cli::usage);
    }
    return code;
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
                if (c.name == std::string_view(argv[2])) return std::cout << c.usage, finish("", cli::ok);
        print_usage(std::cout);
        return finish("", cli::ok);
    }
    if (name == "--commands") {  // for shell completion
        for (const auto& c : commands()) std::cout << c.name << "\n";
        return finish("", cli::ok);
    }
    for (const auto& c : commands())
        if (c.name == name) {
            const int code = run(c, argc, argv);
            cli::print_request_counts();
            return finish(std::string(" ") + std::string(c.name), code);
        }
    std::cerr << "smdebug: unknown command '" << name << "' (smdebug --help lists them)\n";
    return cli::usage;
}
