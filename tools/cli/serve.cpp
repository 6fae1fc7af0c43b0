// `smdebug serve PATH|NAME=PATH... [--host ADDR] [--port N] [--trust-host NAME]... [--time-limit S]`:
// a live view of trials in the browser (docs/serve.md). The one translation unit of the CLI that
// includes Boost.Beast and the embedded page (tools/serve/), compiled beside main.cpp.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <smdebug/smdebug.hpp>

#include "../serve/api.hpp"
#include "../serve/http_server.hpp"
#include "../serve/run_registry.hpp"
#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "serve_assets.hpp"
#include "session.hpp"

namespace cli {

extern const char* const serve_usage;
const char* const serve_usage =
    "usage: smdebug serve PATH|NAME=PATH... [--host ADDR] [--port N] [--trust-host NAME]... [--time-limit SECONDS] [--wait]\n"
    "  Serves a live view of the trials (folders or s3://bucket/prefix) at http://ADDR:N/ (default\n"
    "  127.0.0.1:6006; --port 0 picks a free port): runs, tensors by collection, charts of values and\n"
    "  reductions per worker, histograms and the built-in rules' firings, following running jobs. NAME=PATH\n"
    "  names a run (default: the folder's name). Requests whose Host is not ADDR or localhost are refused\n"
    "  (add names with --trust-host); an API request stops after --time-limit seconds (default 10).\n"
    "  A PATH that holds no trial fails at once (exit 2), as every command does, unless --wait asks to wait\n"
    "  for the job to start writing. The JSON API is in docs/serve.md. Stops on Ctrl-C (exit 0).\n";

namespace {

// NAME=PATH, or PATH named by its folder. A path holding '=' is a path when what precedes the '='
// holds a '/' (or it starts s3://).
std::pair<std::string, std::string> run_name_and_path(const std::string& arg) {
    const auto eq = arg.find('=');
    if (eq != std::string::npos && eq > 0 && arg.substr(0, eq).find('/') == std::string::npos && !arg.starts_with("s3:"))
        return {arg.substr(0, eq), arg.substr(eq + 1)};
    return {smdebug::default_trial_name(arg), arg};
}

std::optional<serve::Reply> asset(std::string_view path) {
    if (path == "/") path = "/index.html";
    for (const auto& a : serve::generated::embedded_assets())
        if (path.substr(1) == a.path)
            return serve::Reply{200, std::string(a.content_type), std::string(a.bytes), a.path.ends_with(".html")};
    return std::nullopt;
}

int run_serve_checked(Session& session, int argc, char** argv) {
    const auto args = Args::parse(argc, argv, 2, {"--host", "--port", "--trust-host", "--time-limit"}, {"--wait"});
    if (args.positional.empty()) throw usage_error("expected at least one PATH (smdebug serve --help)");
    std::vector<std::pair<std::string, std::string>> runs;
    std::set<std::string> names;
    for (const auto& p : args.positional) {
        auto [name, path] = run_name_and_path(p);
        if (name.empty() || path.empty()) throw usage_error("'" + p + "' is not PATH or NAME=PATH");
        if (!names.insert(name).second) throw usage_error("two runs are named '" + name + "': name them with NAME=PATH");
        runs.emplace_back(std::move(name), std::move(path));
    }
    // issue 53 item 7: a path without a trial is an error now, not a page that waits forever.
    if (!args.has("--wait"))
        for (const auto& [name, path] : runs) (void)session.checked_store(path);
    serve::ServerOptions options;
    if (const auto h = args.value("--host")) options.host = *h;
    if (const auto p = args.value("--port")) {
        const auto port = parse_int(*p, "--port");
        if (port < 0 || port > 65535) throw usage_error("--port must be from 0 to 65535, not '" + *p + "'");
        options.port = static_cast<std::uint16_t>(port);
    }
    for (const auto& [name, value] : args.options)
        if (name == "--trust-host") options.allowed_hosts.push_back(*value);
    std::chrono::milliseconds time_limit{10000};
    if (const auto t = args.value("--time-limit")) {
        const auto seconds = parse_int(*t, "--time-limit");
        if (seconds < 1 || seconds > 3600) throw usage_error("--time-limit must be from 1 to 3600 seconds, not '" + *t + "'");
        time_limit = std::chrono::seconds(seconds);
    }

    std::unique_ptr<serve::HttpServer> server;
    std::unique_ptr<serve::RunRegistry> registry;
    const auto event = [](const serve::RunStatus& s) { return "event: run\ndata: " + serve::status_json(s) + "\n\n"; };
    try {
        server = std::make_unique<serve::HttpServer>(
            options,
            [&](std::string_view path, std::string_view query) {
                auto a = serve::handle_api(*registry, path, query, time_limit);
                return serve::Reply{static_cast<unsigned>(a.status), "application/json", std::move(a.body), false};
            },
            asset,
            [&] {
                std::vector<std::string> out;
                for (const auto& r : registry->runs()) out.push_back(event(r->snapshot()));
                return out;
            });
    } catch (const smdebug::SMDebugCustomerError& e) {
        throw usage_error(e.what());
    }
    const auto open = [&session](const std::string& name, const std::string& path) {
        auto options = session.trial_options();
        options.name = name;
        return std::make_unique<serve::TrialT>(session.open_store(path), std::move(options));
    };
    registry = std::make_unique<serve::RunRegistry>(runs, std::chrono::milliseconds(500), open,
                                                    [&](const serve::RunStatus& s) { server->broadcast(event(s)); });
    std::cout << "serving " << plural(runs.size(), "run") << " at " << server->url() << " (Ctrl-C stops)" << std::endl;
    if (!SMDEBUG_SERVE_CHARTS)
        session.print_error("this build has no chart library (uPlot): the page shows no charts; `npm ci` in tools/serve/web and build again (docs/serve.md)");
    server->run();
    registry->stop();
    return ok;
}

}  // namespace

int run_serve(Session& session, int argc, char** argv) {
    try {
        return run_serve_checked(session, argc, argv);
    } catch (const CliError& e) {
        const std::string_view message = e.what();
        session.print_error(message.substr(0, message.find('\n')));
        return e.code;
    } catch (const std::exception& e) {
        session.print_error(e.what());
        return usage;
    }
}

}  // namespace cli
