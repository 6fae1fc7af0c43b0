// smdebug: inspect and check smdebug trials (local folders or s3://bucket/prefix).
//   smdebug summary PATH
//   smdebug verify PATH [--reduce NAME] [--abs]
//   smdebug watch PATH [--tensor NAME --reduce NAME [--abs]]
// Exit codes: 0 success, 1 bad data found, 2 usage error or unreadable path.
#include <iostream>
#include <string>

#include "common.hpp"
#include "summary.hpp"
#include "verify.hpp"
#include "rule.hpp"
#if __has_include("watch.hpp")
#include "watch.hpp"
#define SMDEBUG_CLI_HAS_WATCH 1
#endif

namespace {
void print_usage(std::ostream& out) {
    out << "usage: smdebug <command> PATH [options]\n"
           "  summary PATH                         workers, modes, steps, collections, tensors\n"
           "  verify PATH [--reduce NAME] [--abs]  read and check every record; report GB/s\n"
#ifdef SMDEBUG_CLI_HAS_WATCH
           "  watch PATH [--tensor NAME --reduce NAME [--abs]]  follow a running job step by step\n"
#endif
           "  rule NAME PATH [--param k=v ...] [--start-step N] [--end-step M] [--other PATH ...]  run a built-in rule\n"
           "  rules                                list the built-in rules, their parameters and defaults\n"
           "PATH is a trial folder or s3://bucket/prefix.\n"
           "exit codes: 0 success, 1 bad data found, 2 usage error or unreadable path\n";
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        print_usage(std::cerr);
        return cli::usage;
    }
    const std::string command = argv[1];
    if (command == "-h" || command == "--help" || command == "help") {
        print_usage(std::cout);
        return cli::ok;
    }
    try {
        if (command == "summary") {
            auto a = cli::Args::parse(argc, argv, 2, {}, {});
            return a ? cli::run_summary(*a) : cli::usage;
        }
        if (command == "verify") {
            auto a = cli::Args::parse(argc, argv, 2, {"--reduce"}, {"--abs"});
            return a ? cli::run_verify(*a) : cli::usage;
        }
        if (command == "rule") return cli::run_rule(argc, argv);
        if (command == "rules") return cli::run_rules_list();
#ifdef SMDEBUG_CLI_HAS_WATCH
        if (command == "watch") return cli::run_watch(argc, argv);
#endif
    } catch (const smdebug::StorageError& e) {
        std::cerr << "smdebug: " << e.what() << "\n";
        return cli::usage;
    } catch (const smdebug::FormatError& e) {
        std::cerr << "smdebug: bad data: " << e.what() << "\n";
        return cli::bad_data;
    } catch (const smdebug::IndexReaderException& e) {
        std::cerr << "smdebug: bad data: " << e.what() << "\n";
        return cli::bad_data;
    } catch (const smdebug::MissingCollectionFiles& e) {
        std::cerr << "smdebug: " << e.what() << "\n";
        return cli::usage;
    } catch (const smdebug::SMDebugError& e) {
        std::cerr << "smdebug: " << e.python_name() << ": " << e.what() << "\n";
        return cli::bad_data;
    }
    std::cerr << "smdebug: unknown command '" << command << "'\n";
    print_usage(std::cerr);
    return cli::usage;
}
