// The `smdebug` command-line tool, end to end: every command on every conformance trial (and over
// S3 against s3rver in the cli.s3 CTest), `value --format npy` read back by numpy.load, SVG charts
// rendered by rsvg-convert and the HTML report by headless Chromium, both checked by pixels.
// rsvg-convert (librsvg2-bin), chromium and python3 with numpy are required: missing, the tests fail.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <boost/json.hpp>

#include <smdebug/smdebug.hpp>
#include <smdebug/format/detail/tfrecord.hpp>

#include "cli/common_options.hpp"
#include "cli/export/zip.hpp"
#include "cli/findings_text.hpp"
#include "cli/monitor.hpp"
#include "cli/npy.hpp"
#include "cli/plot/histogram.hpp"
#include "cli/plot/line_chart.hpp"
#include "cli/plot/svg.hpp"
#include "cli/plot.hpp"
#include "cli/rule.hpp"
#include "cli/session.hpp"
#include "test_support.hpp"

// The area's own namespace: tests/CMakeLists.txt compiles several areas as one unity translation unit.
namespace smdebug_test_cli {

namespace fs = std::filesystem;
using namespace smdebug;

namespace {

const fs::path data_dir = SMDEBUG_TEST_DATA_DIR;
const fs::path cases_dir = data_dir / "conformance" / "cases";
const fs::path tests_dir = data_dir.parent_path();
const std::string cli_binary = std::string(SMDEBUG_BIN_DIR) + "/smdebug";

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

using Run = test::CliRun;
using test::run_cli;
const auto shell = test::run_shell;
const auto quote = test::shell_quote;

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    for (std::string l; std::getline(s, l);) out.push_back(l);
    return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, '\t');) out.push_back(f);
    return out;
}

bool one_error_line(const Run& r) { return !r.err.empty() && lines(r.err).size() == 1 && r.err.starts_with("smdebug"); }

// A required external program; its absence fails the test (never a skip).
void require_program(const std::string& name, const std::string& package) {
    INFO(name << " is required (Debian package " << package << "; scripts/setup-deps.sh installs it)");
    REQUIRE(shell("command -v " + name).status == 0);
}

// A python3 with numpy: the system one first (CI's Debian python3-numpy), else the first on PATH.
std::string numpy_python() {
    for (const std::string p : {"/usr/bin/python3", "python3"})
        if (shell(p + " -c 'import numpy'").status == 0) return p;
    FAIL("python3 with numpy is required (Debian package python3-numpy; scripts/setup-deps.sh installs it)");
    return {};
}

std::vector<fs::path> conformance_trials() {
    INFO("conformance trials are vendored at " << cases_dir.string());
    REQUIRE(fs::is_directory(cases_dir));
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(cases_dir))
        if (fs::is_directory(e.path() / "trial")) out.push_back(e.path() / "trial");
    std::sort(out.begin(), out.end());
    REQUIRE(out.size() >= 4);
    return out;
}

using test::fast;

// ---- pixels ---------------------------------------------------------------------------------

struct Image {
    int width = 0, height = 0;
    std::vector<unsigned char> rgb;
    std::array<int, 3> at(int x, int y) const {
        const auto i = (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
        return {rgb[i], rgb[i + 1], rgb[i + 2]};
    }
};

std::array<int, 3> hex_colour(std::string_view hex) {
    return {std::stoi(std::string(hex.substr(1, 2)), nullptr, 16), std::stoi(std::string(hex.substr(3, 2)), nullptr, 16),
            std::stoi(std::string(hex.substr(5, 2)), nullptr, 16)};
}

bool close_to(std::array<int, 3> a, std::array<int, 3> b, int tolerance = 40) {
    return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]) <= tolerance;
}

// Decodes a PNG through tests/cli/png_to_ppm.py (standard library only) into RGB pixels.
Image load_png(const fs::path& png, const std::string& python) {
    const auto ppm = png.string() + ".ppm";
    const auto r = shell(python + " " + quote((tests_dir / "cli" / "png_to_ppm.py").string()) + " " + quote(png.string()) + " " + quote(ppm));
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    std::ifstream f(ppm, std::ios::binary);
    std::string magic;
    int maxval = 0;
    Image img;
    f >> magic >> img.width >> img.height >> maxval;
    f.get();
    REQUIRE(magic == "P6");
    img.rgb.resize(static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * 3);
    f.read(reinterpret_cast<char*>(img.rgb.data()), static_cast<std::streamsize>(img.rgb.size()));
    REQUIRE(f.good());
    return img;
}

// Whether a pixel of `colour` is within `radius` pixels of (x, y).
bool colour_near(const Image& img, double x, double y, std::array<int, 3> colour, int radius = 2) {
    for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx) {
            const int px = static_cast<int>(std::lround(x)) + dx, py = static_cast<int>(std::lround(y)) + dy;
            if (px >= 0 && py >= 0 && px < img.width && py < img.height && close_to(img.at(px, py), colour)) return true;
        }
    return false;
}

std::size_t count_colour(const Image& img, std::array<int, 3> colour, int x0, int y0, int x1, int y1) {
    std::size_t n = 0;
    for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y)
        for (int x = std::max(0, x0); x < std::min(img.width, x1); ++x) n += close_to(img.at(x, y), colour) ? 1 : 0;
    return n;
}

Image render_svg(const fs::path& svg, const std::string& python) {
    const auto png = svg.string() + ".png";
    const auto r = shell("rsvg-convert -o " + quote(png) + " " + quote(svg.string()));
    INFO(r.err);
    REQUIRE(r.status == 0);
    return load_png(png, python);
}

// The expected-value file of npy_check.py for a value read through the library.
std::string npy_expectation(const TensorValue& v) {
    std::string out = std::string(v.is_string() ? "str" : dtype_name(v.dtype())) + "\n";
    for (auto d : v.shape()) out += std::to_string(d) + " ";
    out += "\n";
    auto fp = [](double x) {
        if (std::isnan(x)) return std::string("nan");
        if (std::isinf(x)) return std::string(x < 0 ? "-inf" : "inf");
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", x);
        return std::string(buf);
    };
    if (v.is_string()) {
        for (const auto& s : v.strings()) {
            for (unsigned char c : s) {
                char buf[3];
                std::snprintf(buf, sizeof buf, "%02x", c);
                out += buf;
            }
            out += "\n";
        }
        return out;
    }
    visit_dtype(v.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (const auto& x : v.elements<T>()) {
            if constexpr (requires { x.real(); }) out += fp(x.real()) + " " + fp(x.imag()) + "\n";
            else if constexpr (std::is_same_v<T, bool>) out += x ? "1\n" : "0\n";
            else if constexpr (std::is_same_v<T, float16>) out += fp(static_cast<float>(x)) + "\n";
            else if constexpr (std::is_floating_point_v<T>) out += fp(static_cast<double>(x)) + "\n";
            else out += std::to_string(x) + "\n";
        }
    });
    return out;
}

// Every command on one trial path (local or s3://), checked against the library's own answers
// from `trial` (the same data, opened locally). Writes .npy files + expectations into `work`.
void check_every_command(const std::string& path, Trial<AnyStore>& trial, const fs::path& work, std::vector<std::pair<fs::path, fs::path>>& npys) {
    const auto p = quote(path);
    const auto names = trial.tensor_names();
    const auto steps = trial.steps();
    INFO("trial " << path);

    {  // summary, text and JSON
        const auto r = run_cli("summary " + p);
        CHECK(r.status == 0);
        for (const auto& n : names) CHECK(r.out.find(n) != std::string::npos);
        const auto j = run_cli("summary " + p + " --json");
        REQUIRE(j.status == 0);
        const auto doc = boost::json::parse(j.out).as_object();
        CHECK(doc.at("num_steps").as_int64() == static_cast<std::int64_t>(steps.size()));
        CHECK(doc.at("tensors").as_array().size() == names.size());
        CHECK(doc.at("workers").as_array().size() == trial.workers().size());
    }
    {  // tensors, with each filter
        const auto r = run_cli("tensors " + p);
        CHECK(r.status == 0);
        CHECK(lines(r.out) == cli::naturally_sorted(names));
        for (const auto& [cname, c] : trial.collections()) {
            const auto rc = run_cli("tensors " + p + " --collection " + quote(cname));
            CHECK(rc.status == 0);
            CHECK(lines(rc.out) == cli::naturally_sorted(trial.tensor_names(TensorNamesQuery{.collection = cname})));
        }
        if (!steps.empty()) {
            const auto rs = run_cli("tensors " + p + " --step " + std::to_string(steps.front()));
            CHECK(lines(rs.out) == cli::naturally_sorted(trial.tensor_names(TensorNamesQuery{.step = steps.front()})));
        }
        for (Mode m : trial.modes()) {
            const auto ms = trial.steps(m);
            if (ms.empty()) continue;
            const auto rm = run_cli("tensors " + p + " --mode " + std::string(mode_name(m)) + " --step " + std::to_string(ms.back()));
            CHECK(lines(rm.out) == cli::naturally_sorted(trial.tensor_names(TensorNamesQuery{.step = ms.back(), .mode = m})));
        }
        if (!names.empty()) {
            const auto rr = run_cli("tensors " + p + " --regex " + quote("^" + names.front() + "$"));
            CHECK(lines(rr.out) == std::vector<std::string>{names.front()});
        }
    }
    {  // steps: global, per mode, --all
        const auto r = run_cli("steps " + p);
        CHECK(r.status == 0);
        const auto ls = lines(r.out);
        REQUIRE(ls.size() == steps.size());
        for (std::size_t i = 0; i < ls.size(); ++i) {
            const auto f = split_tabs(ls[i]);
            REQUIRE(f.size() == 3);
            CHECK(f[0] == std::to_string(steps[i]));
            const auto mm = trial.mode_modestep(steps[i]);
            CHECK(f[1] == std::string(mode_name(mm ? mm->first : Mode::GLOBAL)));
        }
        for (Mode m : trial.modes()) CHECK(lines(run_cli("steps " + p + " --mode " + std::string(mode_name(m))).out).size() == trial.steps(m).size());
        CHECK(lines(run_cli("steps " + p + " --all").out).size() == trial.steps(Mode::GLOBAL, true).size());
    }
    {  // collections, workers
        const auto r = run_cli("collections " + p);
        CHECK(r.status == 0);
        CHECK(lines(r.out).size() == trial.collections().size());
        const auto w = run_cli("workers " + p);
        CHECK(w.status == 0);
        for (const auto& worker : trial.workers()) CHECK(w.out.find(worker + "\t") != std::string::npos);
        CHECK(w.out.find("expected workers: " + std::to_string(trial.num_workers())) != std::string::npos);
    }
    // per tensor: value (text, json, npy), reductions, shapes
    int i = 0;
    for (const auto& name : names) {
        INFO("tensor " << name);
        auto t = trial.tensor(name);
        const auto ts = t.steps();
        const auto sh = run_cli("shapes " + p + " " + quote(name));
        CHECK(sh.status == 0);
        CHECK(lines(sh.out).size() == ts.size());
        const auto red = run_cli("reductions " + p + " " + quote(name));
        CHECK(red.status == 0);
        CHECK(lines(red.out).size() == ts.size() + 1);  // header + a row per step
        const auto redj = run_cli("reductions " + p + " " + quote(name) + " --json");
        REQUIRE(redj.status == 0);
        const auto rows = boost::json::parse(redj.out).as_object().at("rows").as_array();
        REQUIRE(rows.size() == ts.size());
        std::map<std::int64_t, boost::json::value> mean_at;
        for (const auto& row : rows) {
            CHECK(row.as_object().size() == 12);  // step, mode, mode_step and nine reductions
            mean_at[row.as_object().at("step").as_int64()] = row.as_object().at("mean");
        }
        for (std::size_t k = 0; k < ts.size(); ++k) {  // the batched CLI against reduction_value one by one
            std::optional<double> want;
            try {
                want = t.reduction_value(ts[k], "mean");
            } catch (const TensorUnavailableForStep&) {
            } catch (const SMDebugTypeError&) {
            } catch (const SMDebugValueError&) {
            }
            REQUIRE(mean_at.contains(ts[k]));
            const auto& got = mean_at[ts[k]];
            if (!want || !std::isfinite(*want)) CHECK(got.is_null());
            else CHECK(got.to_number<double>() == Approx(*want).epsilon(1e-15));  // Boost.JSON parses within an ulp
        }
        for (auto s : ts) {
            TensorValue v;
            try {
                v = t.value(s);
            } catch (const TensorUnavailableForStep&) {
                CHECK(run_cli("value " + p + " " + quote(name) + " " + std::to_string(s)).status == 2);  // reductions only
                continue;
            }
            const auto base = "value " + p + " " + quote(name) + " " + std::to_string(s);
            CHECK(run_cli(base).status == 0);
            const auto j = run_cli(base + " --format json");
            REQUIRE(j.status == 0);
            const auto doc = boost::json::parse(j.out).as_object();
            CHECK(doc.at("dtype").as_string() == (v.is_string() ? "str" : dtype_name(v.dtype())));
            CHECK(doc.at("shape").as_array().size() == v.shape().size());
            const auto npy = work / ("v" + std::to_string(i) + ".npy"), expect = work / ("v" + std::to_string(i) + ".txt");
            ++i;
            CHECK(run_cli(base + " --format npy --out " + quote(npy.string())).status == 0);
            std::ofstream(expect) << npy_expectation(v);
            npys.emplace_back(npy, expect);
            // stdout and --out give the same bytes
            CHECK(run_cli(base + " --format npy").out == read_text(npy));
            break;  // one value per tensor is enough here; dtype_zoo has a tensor per dtype
        }
    }
    {  // dump
        const auto r = run_cli("dump " + p + " --json --values");
        REQUIRE(r.status == 0);
        const auto doc = boost::json::parse(r.out).as_object();
        CHECK(doc.at("tensors").as_object().size() == names.size());
        CHECK(doc.at("collections").as_object().size() == trial.collections().size());
        std::size_t saved = 0;
        for (const auto& [n, t] : doc.at("tensors").as_object()) saved += t.as_object().at("steps").as_array().size();
        std::size_t expected = 0;
        for (const auto& n : names)
            for (Mode m : trial.modes()) expected += trial.tensor(n).steps(m, true).size();
        CHECK(saved == expected);
    }
    {  // verify, watch
        CHECK(run_cli("verify " + p).status == 0);
        if (trial.loaded_all_steps()) {
            const auto w = run_cli("watch " + p);
            CHECK(w.status == 0);
            CHECK(lines(w.out).size() == steps.size());
        } else {  // still "running": watch prints what is complete and keeps waiting
            const auto w = shell("timeout 4 " + quote(cli_binary) + " watch " + p);
            CHECK(w.status == 124);
            CHECK(lines(w.out).size() == steps.size());
        }
    }
    {  // plot and report
        const auto svg = work / "plot.svg";
        const auto r = run_cli("plot " + p + " --tensor . --out " + quote(svg.string()));
        CHECK(r.status == 0);
        CHECK(read_text(svg).find("<polyline") != std::string::npos);
        CHECK(run_cli("plot " + p + " --tensor . --log --abs --reduction max --out " + quote(svg.string())).status == 0);
        for (const auto& name : names) {  // a histogram of the first numeric value
            auto t = trial.tensor(name);
            bool drawn = false;
            for (auto s : t.steps()) {
                try {
                    if (t.value(s).is_string()) break;
                } catch (const TensorUnavailableForStep&) {
                    break;
                }
                const auto h = run_cli("plot " + p + " --hist " + quote(name) + " --step " + std::to_string(s) + " --out " + quote((work / "hist.svg").string()));
                CHECK(h.status == 0);
                CHECK(read_text(work / "hist.svg").find("<rect") != std::string::npos);
                drawn = true;
                break;
            }
            if (drawn) break;
        }
        const auto html = work / "report.html";
        CHECK(run_cli("report " + p + " --out " + quote(html.string())).status == 0);
        const auto page = read_text(html);
        CHECK(page.find("<svg") != std::string::npos);
        CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // no network reference
        CHECK(page.find("https://") == std::string::npos);
        CHECK(page.find("<script") == std::string::npos);
    }
}

void check_npys(const std::vector<std::pair<fs::path, fs::path>>& npys, const std::string& python) {
    REQUIRE(!npys.empty());
    std::string cmd;
    for (const auto& [npy, expect] : npys)
        cmd += python + " " + quote((tests_dir / "cli" / "npy_check.py").string()) + " " + quote(npy.string()) + " " + quote(expect.string()) + " && ";
    const auto r = shell(cmd + "true");
    INFO(r.out << r.err);
    CHECK(r.status == 0);
}

}  // namespace

TEST_CASE("cli: every command on every conformance trial, npy read back by numpy", "[cli]") {
    const auto python = numpy_python();
    std::vector<std::pair<fs::path, fs::path>> npys;
    std::set<std::string> dtypes_checked;
    for (const auto& dir : conformance_trials()) {
        test::TempDir work("cli-work");
        Trial<AnyStore> trial(open_store(dir.string()), fast());
        check_every_command(dir.string(), trial, work.path, npys);
        check_npys(npys, python);
        for (const auto& n : trial.tensor_names())
            for (auto s : trial.tensor(n).steps()) {
                try {
                    dtypes_checked.insert(std::string(dtype_name(trial.tensor(n).value(s).dtype())));
                } catch (const SMDebugError&) {
                }
                break;
            }
        npys.clear();
    }
    CHECK(dtypes_checked.size() >= 10);  // dtype_zoo: the npy export covers the dtypes
}

TEST_CASE("cli: --help for every command; errors are one line with the documented exit code", "[cli]") {
    const auto help = run_cli("--help");
    CHECK(help.status == 0);
    const std::vector<std::string> commands = lines(run_cli("--commands").out);
    for (const char* c : {"summary", "tensors", "steps", "collections", "workers", "value", "reductions", "shapes", "dump", "verify", "watch",
                          "plot", "report"}) {
        CHECK(std::find(commands.begin(), commands.end(), c) != commands.end());
        const auto r = run_cli(std::string(c) + " --help");
        CHECK(r.status == 0);
        CHECK(r.out.starts_with(std::string("usage: smdebug ") + c));
        CHECK(help.out.find(std::string("  ") + c + " ") != std::string::npos);
    }
    const auto good = (cases_dir / "pt_train_eval" / "trial").string();
    test::TempDir empty("cli-empty");
    struct Case {
        std::string args;
        int status;
    };
    const std::vector<Case> cases = {
        {"", 2},
        {"frobnicate " + quote(good), 2},
        {"summary", 2},
        {"summary /nonexistent/trial", 2},
        {"summary " + quote(empty.path.string()), 2},                     // not a trial
        {"tensors " + quote(good) + " --bogus", 2},
        {"tensors " + quote(good) + " --collection nope", 2},
        {"tensors " + quote(good) + " --regex '('", 2},
        {"steps " + quote(good) + " --mode SIDEWAYS", 2},
        {"value " + quote(good) + " no_such_tensor 0", 2},                // unknown tensor
        {"value " + quote(good) + " CrossEntropyLoss_output_0 9999", 2},  // no such step
        {"value " + quote(good) + " CrossEntropyLoss_output_0 zero", 2},
        {"value " + quote(good) + " CrossEntropyLoss_output_0 0 --format xml", 2},
        {"value " + quote(good) + " CrossEntropyLoss_output_0 0 --worker worker_9", 2},
        {"reductions " + quote(good) + " CrossEntropyLoss_output_0 --reduction median", 2},
        {"shapes " + quote(good), 2},
        {"plot " + quote(good) + " --tensor loss", 2},  // no --out
        {"plot " + quote(good) + " --tensor zzz_none --out /tmp/x.svg", 2},
        {"report " + quote(good), 2},
    };
    for (const auto& c : cases) {
        INFO("smdebug " << c.args);
        const auto r = run_cli(c.args);
        CHECK(r.status == c.status);
        if (!c.args.empty() && !c.args.starts_with("frobnicate")) CHECK(one_error_line(r));
        CHECK(r.out.empty());
    }
    SECTION("a corrupt event file is bad data (exit 1), named on one line") {
        test::TempDir copy("cli-corrupt");
        fs::copy(good, copy.path / "trial", fs::copy_options::recursive);
        Trial<AnyStore> trial(open_store((copy.path / "trial").string()), fast());
        const auto key = paths::event_key(0, "worker_0");
        const auto file = copy.path / "trial" / key;
        std::string bytes = read_text(file);
        REQUIRE(bytes.size() > 20);
        for (std::size_t k = 16; k < bytes.size(); k += 7) bytes[k] = static_cast<char>(bytes[k] ^ 0x5a);
        std::ofstream(file, std::ios::binary) << bytes;
        const auto p = quote((copy.path / "trial").string());
        const auto v = run_cli("value " + p + " CrossEntropyLoss_output_0 0");
        CHECK(v.status == 1);
        CHECK(one_error_line(v));
        CHECK(v.err.find("bad data") != std::string::npos);
        CHECK(run_cli("verify " + p).status == 1);
        CHECK(run_cli("summary " + p).status == 1);
    }
}

TEST_CASE("cli: verify --reduce reduces every raw value once and sums the results", "[cli]") {
    const auto path = (cases_dir / "pt_train_eval" / "trial").string();
    Trial<AnyStore> trial(open_store(path), fast());
    std::size_t count = 0;
    double sum = 0;
    for (const auto& name : trial.tensor_names())
        for (Mode m : trial.modes())
            for (auto s : trial.tensor(name).steps(m)) {
                TensorValue v;
                try {
                    v = trial.tensor(name).value(s, m);
                } catch (const TensorUnavailableForStep&) {
                    continue;  // only reductions were saved at this step
                }
                if (v.is_string() || v.empty()) continue;
                sum += compute_reduction(v, Reduction::mean, true);
                ++count;
            }
    REQUIRE(count > 10);
    const auto r = run_cli("verify " + quote(path) + " --reduce mean --abs");
    REQUIRE(r.status == 0);
    const auto line = r.out.substr(r.out.find("reduced "));
    CHECK(line.starts_with("reduced " + std::to_string(count) + " values (abs_mean), sum of results "));
    const double printed = std::stod(line.substr(line.find("sum of results ") + 15));
    CHECK(printed == Approx(sum).epsilon(1e-12));
    CHECK(run_cli("verify " + quote(path) + " --reduce nope").status == 2);
}

TEST_CASE("cli: the progress bar shows on a terminal only", "[cli]") {
    const auto good = quote((cases_dir / "pt_train_eval" / "trial").string());
    const auto piped = run_cli("verify " + good);
    CHECK(piped.err.empty());
    // `script` gives the command a pseudo-terminal (util-linux, in every Debian)
    require_program("script", "util-linux");
    test::TempDir dir("cli-tty");
    const auto log = dir.path / "tty.log";
    const auto r = shell("script -qec " + quote("SMDEBUG_TRAINING_END_DELAY_REFRESH=0 " + quote(cli_binary) + " verify " + good) + " " + quote(log.string()));
    CHECK(r.status == 0);
    const auto tty = read_text(log);
    CHECK(tty.find("verifying steps [") != std::string::npos);
    CHECK(tty.find("100%") != std::string::npos);
}

TEST_CASE("cli: .npy header and layout", "[cli]") {
    const std::array<float, 6> xs{1, 2, 3, 4, 5, 6};
    const auto npy = cli::to_npy(TensorValue::from<float>(xs, Shape{2, 3}));
    CHECK(npy.starts_with(std::string("\x93NUMPY\x01\x00", 8)));
    const std::size_t header = static_cast<unsigned char>(npy[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(npy[9])) << 8);
    CHECK((10 + header) % 64 == 0);
    CHECK(npy.substr(10, header).starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
    CHECK(npy.size() == 10 + header + 24);
    CHECK(cli::to_npy(TensorValue(Shape{2}, {"ab", "c"})).ends_with(std::string("abc\0", 4)));
}

TEST_CASE("cli: an SVG line chart renders lines where the data says", "[cli][render]") {
    require_program("rsvg-convert", "librsvg2-bin");
    const auto python = numpy_python();
    test::TempDir dir("cli-svg");
    SECTION("a rising and a falling series: lower-left to upper-right, and the reverse") {
        cli::plot::Series up{"up", {}}, down{"down", {}};
        for (int s = 0; s <= 20; ++s) {
            up.points.emplace_back(s, s * 0.5);
            down.points.emplace_back(s, 10 - s * 0.5);
        }
        cli::plot::LineChartSpec spec;
        spec.title = "test";
        const auto L = cli::plot::line_chart_layout(spec, {up, down});
        std::ofstream(dir.path / "c.svg") << cli::plot::render_line_chart(spec, {up, down});
        const auto img = render_svg(dir.path / "c.svg", python);
        REQUIRE(img.width == 900);
        const auto blue = hex_colour(cli::svg::colour(0)), orange = hex_colour(cli::svg::colour(1));
        const int l = static_cast<int>(L.left), r = static_cast<int>(L.right), t = static_cast<int>(L.top), b = static_cast<int>(L.bottom);
        const int mx = (l + r) / 2, my = (t + b) / 2;
        // up: in the lower-left and upper-right quadrants, not in the other two (bar the centre)
        CHECK(count_colour(img, blue, l, my + 10, mx - 10, b + 4) > 50);
        CHECK(count_colour(img, blue, mx + 10, t - 4, r + 4, my - 10) > 50);
        CHECK(count_colour(img, blue, l, t, mx - 20, my - 20) == 0);
        CHECK(count_colour(img, blue, mx + 20, my + 20, r, b) == 0);
        CHECK(count_colour(img, orange, l, t - 4, mx - 10, my - 10) > 50);
        CHECK(count_colour(img, orange, mx + 10, my + 10, r + 4, b + 4) > 50);
        CHECK(colour_near(img, l, b, blue));
        CHECK(colour_near(img, r, t, blue));
        // the legend swatches
        CHECK(count_colour(img, blue, r, t - 10, static_cast<int>(spec.width), t + 20) > 100);
    }
    SECTION("log scale: a geometric series is a straight line") {
        cli::plot::Series g{"g", {}};
        for (int s = 0; s <= 4; ++s) g.points.emplace_back(s, std::pow(10.0, s));
        cli::plot::LineChartSpec spec;
        spec.log_y = true;
        const auto L = cli::plot::line_chart_layout(spec, {g});
        CHECK(L.y.lo == 1);
        CHECK(L.y.hi == 10000);
        std::ofstream(dir.path / "log.svg") << cli::plot::render_line_chart(spec, {g});
        const auto img = render_svg(dir.path / "log.svg", python);
        const auto blue = hex_colour(cli::svg::colour(0));
        for (double f : {0.125, 0.375, 0.5, 0.625, 0.875})  // along the diagonal
            CHECK(colour_near(img, L.left + f * (L.right - L.left), L.bottom - f * (L.bottom - L.top), blue));
        CHECK_FALSE(colour_near(img, L.left + 0.25 * (L.right - L.left), L.bottom - 0.75 * (L.bottom - L.top), blue, 6));
    }
    SECTION("smdebug plot on a conformance trial: a dot at every (step, mean) the library reads") {
        const auto path = (cases_dir / "pt_train_eval" / "trial").string();
        const auto svg = dir.path / "w.svg";
        REQUIRE(run_cli("plot " + quote(path) + " --tensor '^MLP_fc[0-9].weight$' --out " + quote(svg.string())).status == 0);
        Trial<AnyStore> trial(open_store(path), fast());
        const auto names = trial.tensor_names(TensorNamesQuery{.regex = {"^MLP_fc[0-9].weight$"}});
        REQUIRE(names.size() == 3);
        const auto series = cli::reduction_series(trial, names, Reduction::mean, false, Mode::GLOBAL);
        const auto L = cli::plot::line_chart_layout(cli::plot::LineChartSpec{}, series);
        const auto img = render_svg(svg, python);
        std::size_t points = 0;
        for (std::size_t k = 0; k < series.size(); ++k) {
            const auto c = hex_colour(cli::svg::colour(k));
            for (const auto& [x, y] : series[k].points) {
                INFO(series[k].label << " step " << x << " mean " << y);
                CHECK(colour_near(img, L.x.to_pixel(x), L.y.to_pixel(y), c));
                ++points;
            }
        }
        CHECK(points >= 27);
    }
    SECTION("a histogram: bar heights as counted") {
        std::vector<double> values;
        for (int k = 0; k < 100; ++k) values.push_back(k < 50 ? 0.1 * k : 4.9);  // half uniform, half in the last bin
        const auto h = cli::plot::make_histogram(values, 10);
        CHECK(h.counts.back() == 55);
        CHECK(h.counts.front() == 5);
        cli::plot::HistogramSpec spec;
        const auto L = cli::plot::histogram_layout(spec, h);
        std::ofstream(dir.path / "h.svg") << cli::plot::render_histogram(spec, h);
        const auto img = render_svg(dir.path / "h.svg", python);
        const auto blue = hex_colour(cli::svg::colour(0));
        for (std::size_t k = 0; k < h.counts.size(); ++k) {
            const double cx = L.x.to_pixel(h.lo + h.bin_width() * (static_cast<double>(k) + 0.5));
            const double top = L.y.to_pixel(static_cast<double>(h.counts[k]));
            CHECK(close_to(img.at(static_cast<int>(cx), static_cast<int>(top) + 3), blue));
            CHECK_FALSE(close_to(img.at(static_cast<int>(cx), static_cast<int>(top) - 4), blue));
        }
    }
}

TEST_CASE("cli: the HTML report in headless Chromium", "[cli][render]") {
    require_program("chromium", "chromium");
    const auto python = numpy_python();
    test::TempDir dir("cli-report");
    const auto path = (cases_dir / "pt_train_eval" / "trial").string();
    const auto html = dir.path / "report.html";
    REQUIRE(run_cli("report " + quote(path) + " --out " + quote(html.string())).status == 0);
    const auto page = read_text(html);
    // The CLI registers ExplodingTensor and VanishingGradient with the report; on this healthy run
    // (no NaN, gradients above 1e-7) neither fires.
    // Each with the tensors it inspected, as `smdebug rule` counts them (19 and the 6 gradients).
    CHECK(page.find("Rules run: ExplodingTensor (checked 19 tensors), VanishingGradient (checked 6 tensors).") != std::string::npos);
    CHECK(page.find("No rule found anything.") != std::string::npos);
    for (const char* section : {"id=\"summary\"", "id=\"timeline\"", "id=\"workers\"", "id=\"collections\"", "id=\"rules\""})
        CHECK(page.find(section) != std::string::npos);
    const auto png = dir.path / "shot.png";
    const auto r = shell("chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
                         "--disable-component-update --disable-sync --user-data-dir=" + quote((dir.path / "profile").string()) +
                         " --window-size=1000,1600 --screenshot=" + quote(png.string()) + " " + quote("file://" + html.string()));
    INFO(r.err);
    REQUIRE(fs::exists(png));
    const auto img = load_png(png, python);
    REQUIRE(img.width == 1000);
    REQUIRE(img.height == 1600);
    // the completeness grid: one worker, 21 steps, all written (green cells)
    CHECK(count_colour(img, hex_colour("#2ca02c"), 0, 0, img.width, img.height) > 21 * 100);
    // the timeline's mode ticks and the first collection chart's lines (blue, orange)
    CHECK(count_colour(img, hex_colour(cli::svg::colour(0)), 0, 0, img.width, img.height) > 300);
    CHECK(count_colour(img, hex_colour(cli::svg::colour(1)), 0, 0, img.width, img.height) > 100);
    // text was laid out: dark pixels in the top band (title, summary table)
    CHECK(count_colour(img, {34, 34, 34}, 0, 0, img.width, 120) > 200);
}

TEST_CASE("cli over S3 (s3rver): every command on every conformance trial", "[.cli-s3]") {
    const char* endpoint = std::getenv("SMDEBUG_S3RVER_ENDPOINT");
    INFO("run through the cli.s3 CTest (tests/cmake/cli.cmake), which starts s3rver");
    REQUIRE(endpoint != nullptr);
    ::setenv("AWS_ENDPOINT_URL", endpoint, 1);
    ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
    ::setenv("AWS_REGION", "us-east-1", 1);
    ::unsetenv("AWS_PROFILE");
    ::unsetenv("AWS_SESSION_TOKEN");
    const auto python = numpy_python();
    std::vector<std::pair<fs::path, fs::path>> npys;
    const auto run = std::to_string(::getpid());
    for (const auto& dir : conformance_trials()) {
        const std::string url = "s3://smdebug-test/cli-" + run + "/" + dir.parent_path().filename().string();
        const auto store = open_store(url);
        for (const auto& e : fs::recursive_directory_iterator(dir)) {
            if (!e.is_regular_file()) continue;
            const auto key = fs::relative(e.path(), dir).generic_string();
            store.write(key, LocalStore(dir.string()).read(key).bytes());
        }
        test::TempDir work("cli-s3");
        Trial<AnyStore> trial(open_store(dir.string()), fast());
        check_every_command(url, trial, work.path, npys);
        check_npys(npys, python);
        npys.clear();
        CHECK(run_cli("summary " + quote(url + "-missing")).status == 2);
    }
}

TEST_CASE("cli: names from a trial are printed escaped; JSON output is valid UTF-8", "[cli][reliability]") {
    // Names inside the trial's JSON files are valid UTF-8 (the files would not parse otherwise) but
    // may hold control characters; the folder's own name may hold any byte.
    test::TempDir dir("cli-escapes");
    const auto folder = dir.path / "run\xff\x1b[31m";
    const std::string evil_worker = "w\x1b[2J\nforged line";
    const std::string evil_tensor = "t\x1b]0;title\x07\r\xc2\x9b\\x";
    {
        HookOptions o;
        o.write_end_marker = true;
        o.save_all = true;
        o.save_config = SaveConfig(save_config_mode(1));
        o.worker_name = evil_worker;
        Hook<LocalStore> hook(folder.string(), o);
        for (int step = 0; step < 2; ++step) {
            hook.save_tensor(evil_tensor, std::vector<float>{1.0f, 2.0f});
            hook.next_step();
        }
        hook.close();
    }
    const std::string p = quote(folder.string());
    for (const std::string cmd : {"summary ", "workers ", "tensors ", "steps ", "collections "}) {
        INFO(cmd);
        const auto r = run_cli(cmd + p);
        CHECK(r.status == 0);
        CHECK(r.out.find('\x1b') == std::string::npos);
        CHECK(r.out.find('\r') == std::string::npos);
        CHECK(r.out.find('\x07') == std::string::npos);
        CHECK(r.out.find("\xc2\x9b") == std::string::npos);
        CHECK(r.out.find('\xff') == std::string::npos);
        CHECK(r.out.find("\nforged") == std::string::npos);  // no line starts with the forged text
    }
    CHECK_THAT(run_cli("workers " + p).out, Catch::Matchers::Contains("w\\x1b[2J\\x0aforged line"));
    CHECK_THAT(run_cli("tensors " + p).out, Catch::Matchers::Contains("t\\x1b]0;title\\x07\\x0d\\xc2\\x9b\\\\x"));
    CHECK_THAT(run_cli("summary " + p).out, Catch::Matchers::Contains("run\\xff\\x1b[31m"));
    const auto j = run_cli("summary " + p + " --json");
    REQUIRE(j.status == 0);
    boost::system::error_code ec;
    const auto doc = boost::json::parse(j.out, ec);  // Boost.JSON rejects invalid UTF-8
    REQUIRE(!ec);
    CHECK(std::string(doc.at("workers").at(0).as_string()) == evil_worker);  // JSON escapes carry it exactly
    CHECK_THAT(std::string(doc.at("path").as_string()), Catch::Matchers::Contains("run\\xff\x1b[31m"));  // the one byte JSON cannot carry
    // An error message quoting the path is escaped too.
    const auto missing = run_cli("summary " + quote((dir.path / "gone\x1b[2J").string()));
    CHECK(missing.status == 2);
    CHECK(missing.err.find('\x1b') == std::string::npos);
}

TEST_CASE("cli: exit codes follow the table on every path: 0 success, 1 bad data or a rule fired, 2 usage or unreadable", "[cli][reliability]") {
    const auto good = (cases_dir / "pt_train_eval" / "trial");
    test::TempDir dir("cli-exit-codes");
    auto copy_of = [&](const std::string& name) {
        const auto to = dir.path / name;
        fs::copy(good, to, fs::copy_options::recursive);
        return to;
    };
    const std::string index0 = "index/000000000/000000000000_worker_0.json";
    // bad data: a corrupt record, an index value the reader refuses, an index file that is not JSON
    const auto corrupt = copy_of("corrupt");
    {
        const auto ev = corrupt / "events/000000000000/000000000000_worker_0.tfevents";
        std::fstream f(ev, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(40);
        f.put('\x7f');
    }
    const auto negative = copy_of("negative-mode-step");
    {
        std::ifstream in(negative / index0);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto doc = boost::json::parse(text);
        doc.at("meta").as_object()["mode_step"] = std::numeric_limits<std::int64_t>::min();
        std::ofstream(negative / index0) << boost::json::serialize(doc);
    }
    const auto not_json = copy_of("not-json");
    std::ofstream(not_json / index0) << "{ this is not json";
    const struct {
        std::string args;
        int code;
    } rows[] = {
        {"summary " + quote(good.string()), 0},
        {"verify " + quote(good.string()), 0},
        {"verify " + quote(corrupt.string()), 1},
        {"summary " + quote(negative.string()), 1},
        {"steps " + quote(negative.string()), 1},
        {"summary " + quote(not_json.string()), 1},
        {"rule ExplodingTensor " + quote((cases_dir / "dtype_zoo" / "trial").string()) + " --param tensor_regex=^nonfinite/", 1},
        {"frobnicate " + quote(good.string()), 2},
        {"summary " + quote(good.string()) + " --no-such-option", 2},
        {"summary " + quote((dir.path / "missing").string()), 2},
        {"value " + quote(good.string()) + " no/such/tensor 0", 2},
        {"summary " + quote(good.string()) + " --read-timeout 0", 2},
    };
    for (const auto& row : rows) {
        INFO(row.args);
        const auto r = run_cli(row.args);
        CHECK(r.status == row.code);
        if (row.code == 2 || (row.code == 1 && !row.args.starts_with("rule") && !row.args.starts_with("verify")))
            CHECK(one_error_line(r));
    }
    // A network failure is never "bad data": nothing listens on port 9.
    const auto net = shell("AWS_ENDPOINT_URL=http://127.0.0.1:9 AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=x "
                           "AWS_REGION=us-east-1 AWS_MAX_ATTEMPTS=1 timeout 60 " + quote(cli_binary) + " summary s3://bucket/prefix");
    CHECK(net.status == 2);
}

TEST_CASE("cli: summary and verify check broadcast records without expanding them; value refuses one over the budget", "[cli][reliability]") {
    // Float32 records of 8192 x 8192 (64 Mi elements, 256 MiB expanded) from one float_val: 70 bytes each.
    auto varint = [](std::uint64_t v) {
        std::string out;
        for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7F) | 0x80);
        return out + static_cast<char>(v);
    };
    auto len_field = [&](std::uint32_t number, const std::string& bytes) { return varint(number << 3 | 2) + varint(bytes.size()) + bytes; };
    const std::string dim = len_field(2, varint(1 << 3) + varint(8192));
    const std::string one(4, '\0');
    const std::string tensor = varint(1 << 3) + varint(1) + len_field(2, dim + dim) + varint(5 << 3 | 5) + one;
    test::TempDir dir("cli-broadcast");
    fs::copy(cases_dir / "pt_train_eval" / "trial", dir.path / "t", fs::copy_options::recursive);
    const auto t = dir.path / "t";
    // 320 such records in one event file (the issue's 28 KB file that cost verify 65 s).
    constexpr int records = 320;
    std::string file, entries;
    std::size_t first_length = 0;
    for (int i = 0; i < records; ++i) {
        const std::string name = i == 0 ? "huge" : "huge_" + std::to_string(i);
        const auto start = file.size();
        tfrecord::append(file, len_field(5, len_field(1, len_field(1, name) + len_field(8, tensor))));
        entries += std::string(i ? ", " : "") + R"({"tensorname": ")" + name + R"(", "start_idx": )" + std::to_string(start) +
                   R"(, "length": )" + std::to_string(file.size() - start) + "}";
        if (i == 0) first_length = file.size();
    }
    std::ofstream(t / "events/000000000000/000000000000_worker_1.tfevents", std::ios::binary) << file;
    std::ofstream(t / "index/000000000/000000000000_worker_1.json")
        << R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "events/000000000000/000000000000_worker_1.tfevents"}, )"
        << R"("tensor_payload": [)" << entries << R"(], "shape_payload": []})";
    auto start = std::chrono::steady_clock::now();
    const auto s = run_cli("summary " + quote(t.string()));
    CHECK(s.status == 0);
    CHECK_THAT(s.out, Catch::Matchers::Contains("huge") && Catch::Matchers::Contains("(8192, 8192)"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    // verify checks every record (CRCs, identity, the TensorProto against its shape) without
    // expanding one: no record is bad, and the bytes counted are what the values would hold.
    const auto plain = run_cli("verify " + quote((cases_dir / "pt_train_eval" / "trial").string()));
    REQUIRE(plain.status == 0);
    const auto bytes_of_values = [](const std::string& out) {
        const auto at = out.find("\nbytes ");
        return at == std::string::npos ? std::uint64_t{0} : std::stoull(out.substr(at + 7));
    };
    start = std::chrono::steady_clock::now();
    const auto v = run_cli("verify " + quote(t.string()));
    CHECK(v.status == 0);
    CHECK_THAT(v.out, Catch::Matchers::Contains("bad records 0"));
    CHECK(bytes_of_values(v.out) == bytes_of_values(plain.out) + std::uint64_t{records} * 8192 * 8192 * 4);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    // A record whose values do not fit its shape is still found by the check: dtype double, but
    // its one value is a float_val (no double_val), in a record of the same length.
    std::string bad = tensor;
    bad[1] = 2;
    std::string bad_file;
    tfrecord::append(bad_file, len_field(5, len_field(1, len_field(1, "huge") + len_field(8, bad))));
    REQUIRE(bad_file.size() == first_length);
    std::ofstream(t / "events/000000000000/000000000000_worker_1.tfevents", std::ios::binary | std::ios::in) << bad_file;
    const auto b = run_cli("verify " + quote(t.string()));
    CHECK(b.status == 1);
    CHECK_THAT(b.err, Catch::Matchers::Contains("bad data: tensor huge") && Catch::Matchers::Contains("values, shape needs"));
    const auto value = run_cli("value " + quote(t.string()) + " huge_1 0 --worker worker_1");
    CHECK(value.status == 1);
    CHECK_THAT(value.err, Catch::Matchers::Contains("expansion budget") && Catch::Matchers::Contains("'huge_1'"));
}

TEST_CASE("cli: --steps A:B loads only those steps on every command; summary --latest shows the newest step", "[cli][scale]") {
    const auto trial = quote((cases_dir / "pt_train_eval" / "trial").string());
    const auto all = run_cli("steps " + trial);
    REQUIRE(all.status == 0);
    // Rows are "global<TAB>mode<TAB>mode step", in global order.
    std::vector<std::int64_t> globals;
    std::istringstream rows(all.out);
    for (std::string line; std::getline(rows, line);) globals.push_back(std::stoll(line.substr(0, line.find('\t'))));
    REQUIRE(globals.size() > 6);
    const auto a = globals[2], b = globals[5];
    const auto ranged = run_cli("steps " + trial + " --steps " + std::to_string(a) + ":" + std::to_string(b));
    CHECK(ranged.status == 0);
    std::string expected;
    std::istringstream again(all.out);
    for (std::string line; std::getline(again, line);)
        if (const auto g = std::stoll(line); g >= a && g < b) expected += line + "\n";
    CHECK(ranged.out == expected);
    CHECK(run_cli("steps " + trial + " --steps=" + std::to_string(b) + ":").out == all.out.substr(all.out.find(std::to_string(b) + "\t")));
    const auto summary = run_cli("summary " + trial + " --steps :" + std::to_string(b));
    CHECK_THAT(summary.out, Catch::Matchers::Contains("steps      5 (global 0.." + std::to_string(globals[4]) + ")"));
    const auto latest = run_cli("summary " + trial + " --latest");
    CHECK(latest.status == 0);
    CHECK_THAT(latest.out, Catch::Matchers::Contains("steps      1 (global " + std::to_string(globals.back()) + ".." +
                                                     std::to_string(globals.back()) + ")"));
    const auto latest_json = run_cli("summary " + trial + " --latest --json");
    CHECK_THAT(latest_json.out, Catch::Matchers::Contains("\"last_step\":" + std::to_string(globals.back())));
    for (const std::string bad : {"5:2", "x:3", "3", ":", "-1:4", "1:2:3"}) {
        INFO(bad);
        const auto r = run_cli("steps " + trial + " --steps " + bad);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Matchers::Contains("--steps"));
    }
    CHECK(run_cli("steps " + trial + " --steps").status == 2);
}

TEST_CASE("cli: --connect-timeout / --read-timeout and the AWS retry settings; bad values are exit 2", "[cli][reliability]") {
    const std::string aws = "AWS_ENDPOINT_URL=http://127.0.0.1:9 AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=secret-not-printed "
                            "AWS_REGION=us-east-1 ";
    for (const std::string bad : {"--read-timeout abc", "--connect-timeout 0", "--read-timeout=99999999", "--connect-timeout"}) {
        INFO(bad);
        const auto r = shell(aws + "timeout 60 " + quote(cli_binary) + " summary s3://bucket/prefix " + bad);
        CHECK(r.status == 2);
        CHECK(one_error_line(r));
        CHECK_THAT(r.err, Catch::Matchers::Contains(bad.substr(0, bad.find_first_of(" ="))));
    }
    for (const std::string setting : {"AWS_MAX_ATTEMPTS=lots", "AWS_RETRY_MODE=eager"}) {
        INFO(setting);
        const auto r = shell(aws + setting + " timeout 60 " + quote(cli_binary) + " summary s3://bucket/prefix");
        CHECK(r.status == 2);
        CHECK(one_error_line(r));
        CHECK_THAT(r.err, Catch::Matchers::Contains(setting.substr(0, setting.find('='))));
        CHECK_THAT(r.err, !Catch::Matchers::Contains("secret-not-printed"));
    }
    // Nothing listens on port 9: one attempt, a connect timeout of 1 s, a clear error, exit 2.
    const auto start = std::chrono::steady_clock::now();
    const auto r = shell(aws + "AWS_MAX_ATTEMPTS=1 timeout 60 " + quote(cli_binary) +
                         " summary s3://bucket/prefix --connect-timeout 1 --read-timeout=2");
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("127.0.0.1:9"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("cli: a CA bundle that cannot be loaded is exit 2 naming the file, never an abort", "[cli][reliability]") {
    // The TLS context is built before connecting, so no server is needed (port 9: nothing listens).
    const auto r = shell("AWS_CA_BUNDLE=/missing-ca-bundle.pem AWS_ENDPOINT_URL=https://127.0.0.1:9 AWS_ACCESS_KEY_ID=AKIDEXAMPLE "
                         "AWS_SECRET_ACCESS_KEY=secret-not-printed AWS_REGION=us-east-1 AWS_MAX_ATTEMPTS=1 timeout 60 " +
                         quote(cli_binary) + " summary s3://bucket/prefix");
    CHECK(r.status == 2);
    CHECK(one_error_line(r));
    CHECK_THAT(r.err, Catch::Matchers::Contains("/missing-ca-bundle.pem"));
    CHECK_THAT(r.err, !Catch::Matchers::Contains("secret-not-printed"));
}

// ---- export ------------------------------------------------------------------------------------
// (The conformance trials are exported and read back by the CTests cli.export.*.)

TEST_CASE("cli: export of a Hook-written trial with awkward names, read back by pandas, numpy and protobuf", "[cli][export]") {
    const auto python = numpy_python();
    require_program("protoc", "protobuf-compiler");
    test::TempDir dir("cli-export");
    const auto folder = dir.path / "trial";
    const std::vector<std::string> names = {"a,b\"c", "t\x1b]0;title\x07\r\nx", "\xc3\xbcn\xc3\xaf/c\xc3\xb6" "de", "layer/kernel"};
    for (const std::string worker : {"w 0 \"x\"", "worker_1"}) {
        HookOptions o;
        o.write_end_marker = worker == "worker_1";  // the last worker ends the trial
        o.save_all = true;
        o.save_config = SaveConfig(save_config_mode(1));
        o.worker_name = worker;
        Hook<LocalStore> hook(folder.string(), o);
        for (int step = 0; step < 5; ++step) {
            hook.set_mode(step < 3 ? Mode::TRAIN : Mode::EVAL);
            const float s = static_cast<float>(step) + (worker == "worker_1" ? 0.5f : 0.0f);
            hook.save_tensor(names[0], std::vector<float>{s, -2.0f * s, 0.25f});
            hook.save_tensor(names[1], std::vector<double>{1.0 / (1.0 + s), -s});
            hook.save_tensor(names[2], std::vector<std::int32_t>{step, -7, 11});
            hook.save_tensor(names[3], std::vector<float>{-s, 1e-3f * s, 3.0f, 0.0f, s * s, -1e6f});
            hook.next_step();
        }
        hook.close();
    }
    const auto r = shell(python + " " + quote((tests_dir / "cli" / "export_check.py").string()) + " " + quote(cli_binary) + " " +
                         quote(folder.string()) + " - " + quote((tests_dir / "cli" / "tensorboard_subset.proto").string()));
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Matchers::Contains("export_check: trial: 160 rows (160 against numpy"));
    // The CSV quotes by RFC 4180; the worker's folder is percent-encoded.
    const auto csv = run_cli("export " + quote(folder.string()) + " --format csv --out - --tensor '^a,' --steps 0:1 --reduction max");
    CHECK(csv.status == 0);
    CHECK(csv.out == "worker,mode,step,mode_step,tensor,reduction,value\n\"w 0 \"\"x\"\"\",TRAIN,0,0,\"a,b\"\"c\",max,0.25\n"
                     "worker_1,TRAIN,0,0,\"a,b\"\"c\",max,0.5\n");
    const auto tb = dir.path / "tb";
    REQUIRE(run_cli("export " + quote(folder.string()) + " --format tensorboard --out " + quote(tb.string())).status == 0);
    CHECK(fs::is_directory(tb / "w%200%20%22x%22" / "TRAIN"));
    CHECK(fs::is_directory(tb / "worker_1" / "EVAL"));
}

TEST_CASE("cli: export's zip writer: CRC-32 and the zip64 layout, read back by numpy and zipfile", "[cli][export]") {
    CHECK(cli::exporting::crc32_update(0, "123456789") == 0xCBF43926u);  // the CRC-32 check value (zlib's crc32)
    CHECK(cli::exporting::crc32_update(cli::exporting::crc32_update(0, "1234"), "56789") == 0xCBF43926u);
    const auto python = numpy_python();
    test::TempDir dir("cli-zip");
    for (const bool zip64 : {false, true}) {
        const auto path = (dir.path / (zip64 ? "z64.npz" : "z.npz")).string();
        {
            cli::exporting::ZipWriter zip(path, zip64);
            const std::array<float, 6> xs{1, 2, 3, 4, 5, 6};
            for (const std::string name : {"a/x", "b\xc3\xbc"}) {
                const auto npy = cli::to_npy(TensorValue::from<float>(xs, Shape{2, 3}));
                zip.begin_entry(name + ".npy", npy.size(), cli::exporting::crc32_update(0, npy));
                zip.write(npy);
            }
            zip.close();
        }
        const auto r = shell(python + " -c " + quote("import numpy, sys, zipfile\n"
                                                     "z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None\n"
                                                     "a = numpy.load(sys.argv[1])\n"
                                                     "assert sorted(a.files) == ['a/x', 'b\\u00fc'], a.files\n"
                                                     "assert (a['a/x'] == numpy.arange(1, 7, dtype='f4').reshape(2, 3)).all()\n"
                                                     "print(z.infolist()[0].extra.hex())") + " " + quote(path));
        INFO(r.out << r.err);
        CHECK(r.status == 0);
        CHECK(r.out.starts_with(zip64 ? "0100" : "\n"));  // zip64: the central directory entry carries the 0x0001 extra field
    }
}

TEST_CASE("cli: --requests prints the requests a command sent, on stderr", "[cli][requests]") {
    const std::string trial = quote((data_dir / "conformance/cases/pt_train_eval/trial").string());
    // value opens only its step: the CLI's check for index/ and collections/ files (2 lists), the
    // collections listing and file, the step's bucket (a one-key probe and its listing), its one
    // index file, the end marker, then the value's record — not the trial's 21 index files.
    const auto r = run_cli("value " + trial + " MLP_fc1.bias 0 --requests");
    CHECK(r.status == 0);
    CHECK(r.err == "requests: LIST 5, GET 3, HEAD 1; bytes 9681\n");
    CHECK(r.out.starts_with("[-0.34888986, 0.12222515"));
    CHECK(run_cli("value " + trial + " MLP_fc1.bias 0").err.empty());
    CHECK_THAT(run_cli("value " + trial + " MLP_fc1.bias 21 --requests").err,
               Catch::Matchers::StartsWith("requests: LIST 5, GET 3, HEAD 1;"));
    // printed after a failure too: an unknown tensor is not in the step, so the whole trial answers
    // (as it would without the step's shortcut: the error is the reference's), refreshed once more
    const auto bad = run_cli("value " + trial + " nope 0 --requests");
    CHECK(bad.status == 2);
    CHECK_THAT(bad.err, Catch::Matchers::Contains("\nrequests: LIST 11, GET 24, HEAD 6; bytes 70396\n"));
}

TEST_CASE("cli: --cache and --cache-max-bytes: checked values; a local trial is read directly", "[cli][cache]") {
    const std::string trial = quote((data_dir / "conformance/cases/pt_train_eval/trial").string());
    for (const std::string bad : {"--cache-max-bytes abc", "--cache-max-bytes 0", "--cache-max-bytes=-5", "--cache", "--cache="}) {
        INFO(bad);
        const auto r = run_cli("summary " + trial + " " + bad);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Matchers::Contains("--cache"));
    }
    test::TempDir cache("cli-cache");
    const auto r = run_cli("value " + trial + " MLP_fc1.bias 0 --cache " + quote((cache.path / "c").string()) +
                           " --cache-max-bytes=1000000 --requests");
    CHECK(r.status == 0);
    CHECK(r.err == "requests: LIST 5, GET 3, HEAD 1; bytes 9681\n");
    CHECK_FALSE(fs::exists(cache.path / "c"));  // only remote stores are cached
}

TEST_CASE("cli: the options of every command become TrialOptions; the environment is left as it was", "[cli][cache]") {
    test::ScopedEnv e1("SMDEBUG_CACHE_DIR", nullptr), e2("SMDEBUG_CACHE_MAX_BYTES", nullptr), e3("SMDEBUG_S3_CONNECT_TIMEOUT", nullptr),
        e4("SMDEBUG_S3_READ_TIMEOUT", nullptr), e5("SMDEBUG_S3_MAX_CONCURRENCY", nullptr);
    std::vector<std::string> words = {"smdebug", "summary", "PATH", "--cache", "/tmp/c", "--cache-max-bytes=5000", "--json",
                                      "--connect-timeout", "3", "--read-timeout=4", "--max-concurrency", "7", "--steps", "2:5",
                                      "--requests"};
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    int argc = static_cast<int>(argv.size());
    const auto common = cli::take_common_options(argc, argv.data());
    REQUIRE(argc == 4);
    CHECK(std::string(argv[2]) == "PATH");
    CHECK(std::string(argv[3]) == "--json");
    CHECK(common.count_requests);
    cli::Session session("summary", common);
    const TrialOptions o = session.trial_options();
    CHECK(o.cache_dir == "/tmp/c");
    CHECK(o.cache_max_bytes == 5000u);
    CHECK(o.connect_timeout == std::chrono::milliseconds(3000));
    CHECK(o.read_timeout == std::chrono::milliseconds(4000));
    CHECK(o.max_concurrency == 7u);
    CHECK(o.range_begin == 2);
    CHECK(o.range_end == 5);
    CHECK(o.wait_timeout == std::chrono::milliseconds(0));
    for (const char* name : {"SMDEBUG_CACHE_DIR", "SMDEBUG_CACHE_MAX_BYTES", "SMDEBUG_S3_CONNECT_TIMEOUT", "SMDEBUG_S3_READ_TIMEOUT",
                             "SMDEBUG_S3_MAX_CONCURRENCY"}) {
        INFO(name);
        CHECK(std::getenv(name) == nullptr);
    }
}

TEST_CASE("cli: a Session owns the trials it opens: its end closes their files", "[cli][session]") {
    const fs::path trial = fs::canonical(data_dir / "conformance/cases/pt_train_eval/trial");
    const auto open_in_trial = [&] {  // this process's descriptors of files inside the trial
        int n = 0;
        for (const auto& fd : fs::directory_iterator("/proc/self/fd")) {
            std::error_code ec;
            const auto target = fs::read_symlink(fd.path(), ec);
            if (!ec && target.string().starts_with(trial.string() + "/")) ++n;
        }
        return n;
    };
    REQUIRE(open_in_trial() == 0);
    {
        cli::Session session("value", cli::CommonOptions{});
        auto& t = session.open_trial(trial.string());
        CHECK(session.last_trial() == &t);
        CHECK(t.tensor("MLP_fc1.bias").value(0).shape() == Shape{12});
        CHECK(open_in_trial() > 0);  // the store keeps the event file open for the next read
    }
    CHECK(open_in_trial() == 0);
}

// ---- smdebug monitor: exposition, HTTP server, option parsing ----------------------------------

namespace {
// One HTTP exchange with the server: sends `request` (raw bytes), returns everything it answered
// before closing the connection.
std::string http_exchange(std::uint16_t port, const std::string& request) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    if (!request.empty()) boost::asio::write(socket, boost::asio::buffer(request));
    std::string answer;
    boost::system::error_code ec;
    char buf[4096];
    while (true) {
        const auto n = socket.read_some(boost::asio::buffer(buf), ec);
        answer.append(buf, n);
        if (ec) break;
    }
    return answer;
}
}  // namespace

TEST_CASE("monitor exposition: escaping, both formats, counters, NaN and infinities", "[cli][monitor]") {
    using namespace cli::monitor;
    CHECK(escape_label_value("plain.name/0") == "plain.name/0");
    CHECK(escape_label_value("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
    CHECK(escape_label_value(std::string("x\xff" "y", 3)) == "x\\\\xffy");   // not UTF-8: \xff as text, its backslash escaped
    CHECK(escape_label_value("gr\xc3\xbc\xc3\x9f") == "gr\xc3\xbc\xc3\x9f");  // valid UTF-8 passes
    CHECK(escape_help("a\\b\"c\nd", Exposition::prometheus) == "a\\\\b\"c\\nd");
    CHECK(escape_help("a\\b\"c\nd", Exposition::openmetrics) == "a\\\\b\\\"c\\nd");
    CHECK(sample_value(0.25) == "0.25");
    CHECK(sample_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
    CHECK(sample_value(std::numeric_limits<double>::infinity()) == "+Inf");
    CHECK(sample_value(-std::numeric_limits<double>::infinity()) == "-Inf");
    CHECK(negotiate("application/openmetrics-text; version=1.0.0,text/plain;q=0.5") == Exposition::openmetrics);
    CHECK(negotiate("Application/OpenMetrics-Text") == Exposition::openmetrics);
    CHECK(negotiate("text/plain") == Exposition::prometheus);
    CHECK(negotiate("") == Exposition::prometheus);

    MetricsSnapshot m;
    m.last_step = {{"EVAL", 12}, {"TRAIN", 10}};
    m.rules = {{"ExplodingTensor", 2, 7}, {"AllZero", 0, std::nullopt}};
    m.steps_behind = 3;
    m.tensors[{"loss", "mean", "worker_0"}] = 0.5;
    m.tensors[{"w\"1\\\n", "abs_max", "worker_1"}] = -std::numeric_limits<double>::infinity();
    const std::string families =
        "# HELP smdebug_last_step Global step of the last step the monitor processed, by mode.\n"
        "# TYPE smdebug_last_step gauge\n"
        "smdebug_last_step{mode=\"EVAL\"} 12\n"
        "smdebug_last_step{mode=\"TRAIN\"} 10\n";
    const std::string rest =
        "smdebug_rule_fired_total{rule=\"ExplodingTensor\"} 2\n"
        "smdebug_rule_fired_total{rule=\"AllZero\"} 0\n"
        "# HELP smdebug_rule_last_fired_step Global step at which the rule last fired.\n"
        "# TYPE smdebug_rule_last_fired_step gauge\n"
        "smdebug_rule_last_fired_step{rule=\"ExplodingTensor\"} 7\n"
        "# HELP smdebug_steps_behind Complete steps written by the job and not processed yet.\n"
        "# TYPE smdebug_steps_behind gauge\n"
        "smdebug_steps_behind 3\n"
        "# HELP smdebug_training_ended 1 once the job has ended (its end marker was seen), else 0.\n"
        "# TYPE smdebug_training_ended gauge\n"
        "smdebug_training_ended 0\n"
        "# HELP smdebug_tensor A reduction of a tensor at the last processed step that saved it.\n"
        "# TYPE smdebug_tensor gauge\n"
        "smdebug_tensor{tensor=\"loss\",reduction=\"mean\",worker=\"worker_0\"} 0.5\n"
        "smdebug_tensor{tensor=\"w\\\"1\\\\\\n\",reduction=\"abs_max\",worker=\"worker_1\"} -Inf\n";
    CHECK(render(m, Exposition::prometheus) == families +
                                                   "# HELP smdebug_rule_fired_total Steps at which the rule fired.\n"
                                                   "# TYPE smdebug_rule_fired_total counter\n" +
                                                   rest);
    CHECK(render(m, Exposition::openmetrics) == families +
                                                    "# HELP smdebug_rule_fired Steps at which the rule fired.\n"
                                                    "# TYPE smdebug_rule_fired counter\n" +
                                                    rest + "# EOF\n");
}

TEST_CASE("monitor metrics server: /metrics by Accept header, HEAD, 404, 405, 400, 431, idle timeout", "[cli][monitor]") {
    using namespace cli::monitor;
    std::atomic<int> renders{0};
    MetricsServerOptions o;
    o.max_request_bytes = 1024;
    o.timeout = std::chrono::milliseconds(300);
    MetricsServer server(o, [&](Exposition e) {
        ++renders;
        return std::string(e == Exposition::openmetrics ? "om\n" : "prom\n");
    });
    REQUIRE(server.port() != 0);
    CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics");

    auto ok = http_exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(ok == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: 5\r\nConnection: close\r\n\r\nprom\n");
    ok = http_exchange(server.port(), "GET /metrics?x=1 HTTP/1.1\r\nACCEPT: application/openmetrics-text; version=1.0.0\r\n\r\n");
    CHECK(ok == "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: 3\r\n"
                "Connection: close\r\n\r\nom\n");
    CHECK(http_exchange(server.port(), "HEAD /metrics HTTP/1.0\r\n\r\n").ends_with("Content-Length: 5\r\nConnection: close\r\n\r\n"));
    CHECK(renders == 3);
    CHECK(http_exchange(server.port(), "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 Not Found\r\n"));
    const auto post = http_exchange(server.port(), "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    CHECK(post.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    CHECK_THAT(post, Catch::Matchers::Contains("\r\nAllow: GET, HEAD\r\n"));
    CHECK(http_exchange(server.port(), "nonsense\r\n\r\n").starts_with("HTTP/1.1 400 Bad Request\r\n"));
    CHECK(http_exchange(server.port(), "GET /metrics HTTP/1.1\r\nX: " + std::string(2000, 'a') + "\r\n\r\n")
              .starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
    CHECK(renders == 3);
    // A client that sends nothing (or half a request) is disconnected after the timeout.
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(http_exchange(server.port(), "GET /metr").empty());
    const auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(waited >= std::chrono::milliseconds(250));
    CHECK(waited < std::chrono::seconds(5));
    CHECK(server.answered() == 7);

    // Listening where nobody may: a taken port, an address that is not one.
    MetricsServerOptions taken;
    taken.port = server.port();
    CHECK_THROWS_AS(MetricsServer(taken, [](Exposition) { return std::string(); }), smdebug::SMDebugCustomerError);
    MetricsServerOptions bad;
    bad.bind = "localhost";
    CHECK_THROWS_WITH(MetricsServer(bad, [](Exposition) { return std::string(); }),
                      Catch::Matchers::Contains("'localhost' is not an IP address"));
}

TEST_CASE("monitor options: --rule NAME:k=v lists, --metric REGEX:reduction", "[cli][monitor]") {
    using namespace cli::monitor;
    const auto r = parse_rule_spec("allzero:collection_names=weights,biases,threshold=50");
    CHECK(r.name == "AllZero");
    CHECK(r.params.values() == std::map<std::string, std::string>{{"collection_names", "weights,biases"}, {"threshold", "50"}});
    CHECK(parse_rule_spec("ExplodingTensor").params.values().empty());
    CHECK(parse_rule_spec("ExplodingTensor:").params.values().empty());
    CHECK_THROWS_WITH(parse_rule_spec("NoSuchRule:x=1"), Catch::Matchers::Contains("unknown rule 'NoSuchRule'"));
    CHECK_THROWS_WITH(parse_rule_spec("ExplodingTensor:bogus=1"), Catch::Matchers::Contains("no parameter 'bogus'"));
    CHECK_THROWS_WITH(parse_rule_spec("ExplodingTensor:only_nan"), Catch::Matchers::Contains("not key=value"));
    CHECK_THROWS_WITH(parse_rule_spec(":x=1"), Catch::Matchers::Contains("needs a rule name"));

    auto m = parse_metric_spec("^loss$");
    CHECK((m.regex == "^loss$" && m.reduction == "mean" && m.r == smdebug::Reduction::mean && !m.abs));
    m = parse_metric_spec("grad.*:abs_l2");
    CHECK((m.regex == "grad.*" && m.reduction == "abs_l2" && m.r == smdebug::Reduction::l2 && m.abs));
    m = parse_metric_spec("a:b");  // not a reduction: all of it is the regex
    CHECK((m.regex == "a:b" && m.reduction == "mean"));
    CHECK_THROWS_AS(parse_metric_spec(":max"), cli::CliError);
    CHECK_THROWS_WITH(parse_metric_spec("(unbalanced:max"), Catch::Matchers::Contains("--metric: invalid regular expression '(unbalanced'"));
}

// Issue 46 §1: the commands that follow a job fail at once on a path that holds no trial, and
// wait (saying so once on stderr) only with --wait [SECONDS].
TEST_CASE("cli: rule, watch and monitor fail at once on a path that holds no trial; --wait waits and says so", "[cli][wait]") {
    test::TempDir dir("cli-no-trial");
    fs::create_directories(dir.path / "empty");
    const std::string missing = quote((dir.path / "no" / "such" / "dir").string()), empty = quote((dir.path / "empty").string());
    for (const std::string& args : {"rule ExplodingTensor " + missing, "rule ExplodingTensor " + empty, "watch " + missing,
                                    "watch " + empty, "monitor " + empty + " --rule ExplodingTensor"}) {
        INFO(args);
        const auto start = std::chrono::steady_clock::now();
        const auto r = test::run_shell("timeout 20 " + quote(std::string(SMDEBUG_BIN_DIR) + "/smdebug") + " " + args);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Catch::Matchers::Contains(args.starts_with("rule ExplodingTensor " + missing) || args.starts_with("watch " + missing)
                                                        ? "does not exist"
                                                        : "holds no collections/, index/ or events/ files"));
        CHECK_THAT(r.err, Catch::Matchers::Contains("--wait [SECONDS] waits for a job that has not started writing"));
    }
    for (const std::string& args : {"watch " + empty + " --wait 0.3", "watch " + empty + " --wait=0.3", "rule ExplodingTensor " + empty + " --wait 0.3",
                                    "monitor " + empty + " --rule ExplodingTensor --wait 0.3"}) {
        INFO(args);
        const auto r = run_cli(args);
        CHECK(r.status != 0);
        CHECK_THAT(r.err, Catch::Matchers::Contains("timed out waiting for the collection files"));
        const std::string said = "waiting for the trial at " + (dir.path / "empty").string() +
                                 "/ to be written (no collections file yet) for up to 300 ms";
        const auto at = r.err.find(said);
        CHECK(at != std::string::npos);
        CHECK(r.err.find(said, at + 1) == std::string::npos);  // once
    }
    CHECK(run_cli("watch " + empty + " --wait soon").status == 2);
}

// Issue 46 §5: the report's findings and monitor's lines name every tensor that fired at a step.
TEST_CASE("cli: report findings and monitor lines name every tensor that fired", "[cli][findings]") {
    const auto zoo = (cases_dir / "dtype_zoo" / "trial").string();
    auto trial = create_trial(zoo, fast());
    const auto results = cli::run_report_rules(trial, {});  // the defaults: ExplodingTensor, VanishingGradient
    std::set<std::string> at0;
    for (const auto& f : results.findings) {
        CHECK_FALSE(f.tensor.empty());
        CHECK(f.message.starts_with("tensor " + f.tensor + ": "));
        if (f.rule == "ExplodingTensor" && f.step == 0) at0.insert(f.tensor);
    }
    for (const char* t : {"f16/special", "nonfinite/all_nan", "nonfinite/f32", "nonfinite/f64"}) CHECK(at0.contains(t));

    // monitor: one line per rule and step, listing every tensor that fired there (issue 53 item 5);
    // dtype_zoo has no modes, so no mode step beside the step
    const auto r = run_cli("monitor " + quote(zoo) + " --rule ExplodingTensor:tensor_regex=^nonfinite/");
    CHECK(r.status == 1);
    const auto out = lines(r.out);
    const std::string all = " ExplodingTensor tensor nonfinite/all_nan: nan at element 0 (and 2 more tensors: nonfinite/f32, nonfinite/f64)";
    CHECK(out == std::vector<std::string>{"step 0" + all, "step 1" + all, "step 3" + all});
    // and ends with what each rule checked, headed by its first firing, as `smdebug rule` does
    CHECK(r.err == "ExplodingTensor: checked 3 steps (0..3) of 3 tensors in " + trial.path() +
                       "; first fired at step 0: tensor nonfinite/all_nan: nan at element 0 (and 2 more tensors); fired at 3 steps\n");
    const auto same = run_cli("rule " + quote(zoo) + " ExplodingTensor --param tensor_regex=^nonfinite/");
    CHECK(same.status == 1);
    CHECK(same.err == r.err);
    CHECK(lines(same.out) == std::vector<std::string>{"step 0" + all.substr(16), "step 1" + all.substr(16), "step 3" + all.substr(16)});
}

// The one formatter of rule findings (tools/cli/findings_text.hpp): rows per rule and step, the
// mode step beside the step, the other tensors listed, headlines, the checked line.
TEST_CASE("cli: findings text: one row per rule and step, mode step beside the step, headlines", "[cli][findings]") {
    using namespace cli::findings;
    std::vector<StepRow> rows;
    add(rows, "ExplodingTensor", 207, "loss", "tensor loss: nan at element 0", "TRAIN", 203);
    add(rows, "ExplodingTensor", 207, "fc3_output_0", "tensor fc3_output_0: inf at element 2", "TRAIN", 203);
    add(rows, "ExplodingTensor", 207, "fc3.weight", "tensor fc3.weight: nan at element 7", "TRAIN", 203);
    add(rows, "AllZero", 207, "fc1.bias", "tensor fc1.bias: all zero", "TRAIN", 203);
    add(rows, "ExplodingTensor", 208, "loss", "tensor loss: nan at element 0", "TRAIN", 204);
    add(rows, "LossNotDecreasing", 12, "", "loss did not decrease", "GLOBAL", 12);
    add(rows, "LossNotDecreasing", 12, "", "loss is nan", "GLOBAL", 12);
    REQUIRE(rows.size() == 4);
    CHECK(line(rows[0]) ==
          "step 207 (TRAIN step 203) tensor loss: nan at element 0 (and 2 more tensors: fc3_output_0, fc3.weight)");
    CHECK(line(rows[1], "AllZero") == "step 207 (TRAIN step 203) AllZero tensor fc1.bias: all zero");
    CHECK(line(rows[3]) == "step 12 loss did not decrease (and 1 more finding: loss is nan)");  // GLOBAL: the global step alone
    CHECK(first_fired(rows[0]) == "first fired at step 207 (TRAIN step 203): tensor loss: nan at element 0 (and 2 more tensors)");
    CHECK(tensors_text(rows[0], 2) == "loss, fc3_output_0 and 1 more");
    CHECK(tensors_text(rows[3], 8).empty());
    const auto heads = headlines(rows);
    REQUIRE(heads.size() == 3);
    CHECK(heads[0].first == &rows[0]);
    CHECK(heads[0].steps == 2);
    CHECK(heads[1].first->rule == "AllZero");
    CHECK(heads[2].steps == 1);
    CHECK(checked_line("ExplodingTensor", {0, 1, 2}, 13, "run/", rows[0], 2) ==
          "ExplodingTensor: checked 3 steps (0..2) of 13 tensors in run/; first fired at step 207 (TRAIN step 203): tensor loss: nan at "
          "element 0 (and 2 more tensors); fired at 2 steps");
    CHECK(checked_line("AllZero", {}, 1, "run/", std::nullopt, 0) == "AllZero: checked 0 steps of 1 tensor in run/; did not fire");
    StepRow no_step{"R", std::nullopt, "", -1, {"t"}, {"m"}};
    CHECK(step_text(no_step) == "-");
}

TEST_CASE("cli: compact writes the manifests readers open from; --remove removes them", "[cli][manifest]") {
    test::TempDir dir("cli-compact");
    fs::copy(cases_dir / "multiworker_incomplete" / "trial", dir.path / "trial", fs::copy_options::recursive);
    const std::string trial = quote((dir.path / "trial").string());
    const auto before = run_cli("steps " + trial + " --all --requests");
    REQUIRE(before.status == 0);
    CHECK_THAT(before.err, Catch::Matchers::Contains("GET 43,"));  // the collections file and 42 index files
    const auto r = run_cli("compact " + trial);
    CHECK(r.status == 0);
    CHECK(r.out == "wrote 1 manifest (6984 bytes) for 42 index files up to step 14; 0 index files left to be read as they are\n");  // version 2: a byte per record for its payload CRC (none here)
    CHECK(fs::exists(dir.path / "trial" / "manifest" / "all" / "000000000000_000000000014.smdm"));
    const auto after = run_cli("steps " + trial + " --all --requests");
    CHECK(after.out == before.out);
    CHECK_THAT(after.err, Catch::Matchers::Contains("GET 2,"));  // the collections file and the manifest
    CHECK(run_cli("compact " + trial).out == r.out);  // again: the same manifest, nothing else
    const auto removed = run_cli("compact " + trial + " --remove");
    CHECK(removed.status == 0);
    CHECK(removed.out == "removed 1 manifest\n");
    CHECK(run_cli("steps " + trial + " --all").out == before.out);
    CHECK(run_cli("compact").status == 2);
    CHECK(run_cli("compact " + quote((dir.path / "nope").string())).status == 2);
    CHECK_THAT(run_cli("--commands").out, Catch::Matchers::Contains("compact"));
}

// ---- issue 46: what a newcomer meets first ----------------------------------------------------

namespace {

// Every `--option` a text names.
std::set<std::string> options_in(const std::string& text) {
    std::set<std::string> out;
    for (std::size_t at = text.find("--"); at != std::string::npos; at = text.find("--", at + 2)) {
        std::size_t end = at + 2;
        while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-')) ++end;
        if (end > at + 2 && std::isalpha(static_cast<unsigned char>(text[at + 2]))) out.insert(text.substr(at, end - at));
    }
    return out;
}

}  // namespace

TEST_CASE("cli: one spelling per concept: every --help, --reduce as an alias, COMMAND PATH, dump, --version, report --rule", "[cli]") {
    const auto good = (cases_dir / "pt_train_eval" / "trial").string();
    const auto p = quote(good);
    const auto commands = lines(run_cli("--commands").out);
    REQUIRE(commands.size() >= 18);
    std::map<std::string, std::set<std::string>> options;  // option -> commands whose usage line names it
    for (const auto& c : commands) {
        INFO("smdebug " << c << " --help");
        const auto r = run_cli(c + " --help");
        REQUIRE(r.status == 0);
        const auto first = lines(r.out).front();
        if (c != "rules") CHECK(first.starts_with("usage: smdebug " + c + " PATH"));  // COMMAND PATH everywhere
        for (const auto& o : options_in(r.out)) options[o].insert(c);
        // the usage lines (before the first indented explanation) never offer an old spelling
        std::string usage_lines;
        for (const auto& l : lines(r.out)) {
            if (l.starts_with("  ") && !l.starts_with("   ")) break;
            usage_lines += l + "\n";
        }
        CHECK(!options_in(usage_lines).contains("--reduce"));
    }
    // Two spellings of one concept show as one option being the start of another (--reduce,
    // --reduction). The pairs left are different concepts, each documented.
    const std::set<std::pair<std::string, std::string>> different = {
        {"--step", "--steps"},          {"--metric", "--metrics-bind"}, {"--metric", "--metrics-port"},
        {"--cache", "--cache-max-bytes"}, {"--hist", "--histograms"}};  // plot's one histogram; export's tensors with histograms
    for (const auto& [a, ca] : options)
        for (const auto& [b, cb] : options)
            if (a != b && b.starts_with(a) && (b[a.size()] != '-' || !different.contains({a, b}))) {
                INFO(a << " (in " << *ca.begin() << ") and " << b << " (in " << *cb.begin() << ")");
                CHECK(different.contains({a, b}));
            }
    CHECK(options.contains("--reduction"));
    for (const char* c : {"reductions", "verify", "watch", "plot", "report", "export"}) {
        INFO(c);
        CHECK(options.at("--reduction").contains(c));
    }
    // the old spelling is accepted wherever the new one is, with the same answer
    const auto tensor = std::string(" CrossEntropyLoss_output_0");
    CHECK(run_cli("reductions " + p + tensor + " --reduce l2").out == run_cli("reductions " + p + tensor + " --reduction l2").out);
    CHECK(run_cli("verify " + p + " --reduce mean").status == 0);
    CHECK(run_cli("verify " + p + " --reduction mean").status == 0);
    CHECK(run_cli("watch " + p + " --tensor" + tensor + " --reduction mean").out == run_cli("watch " + p + " --tensor" + tensor + " --reduce mean").out);
    CHECK(run_cli("export " + p + " --format csv --out - --reduce l2").out == run_cli("export " + p + " --format csv --out - --reduction l2").out);
    // rule: PATH first; the old order still works
    const auto new_order = run_cli("rule " + p + " VanishingGradient --param threshold=0.0065");
    const auto old_order = run_cli("rule VanishingGradient " + p + " --param threshold=0.0065");
    CHECK(new_order.status == 1);
    CHECK(!new_order.out.empty());
    CHECK(old_order.status == new_order.status);
    CHECK(old_order.out == new_order.out);
    // dump: JSON without asking for it
    const auto dump = run_cli("dump " + p);
    REQUIRE(dump.status == 0);
    CHECK(boost::json::parse(dump.out).as_object().at("tensors").as_object().size() == 19);
    CHECK(run_cli("dump " + p + " --json").out == dump.out);
    // --version: the project's VERSION
    std::string version = read_text(tests_dir.parent_path() / "VERSION");
    version.erase(version.find_last_not_of(" \n") + 1);
    const auto v = run_cli("--version");
    CHECK(v.status == 0);
    CHECK(v.out == "smdebug " + version + "\n");
    // report --rule chooses the rules, with parameters as monitor takes them
    test::TempDir dir("cli-report-rule");
    const auto html = (dir.path / "r.html").string();
    const auto rep = run_cli("report " + p + " --out " + quote(html) + " --rule VanishingGradient:threshold=0.0065");
    REQUIRE(rep.status == 0);
    const auto page = read_text(html);
    CHECK(page.find("Rules run: VanishingGradient:threshold=0.0065 (checked 6 tensors).") != std::string::npos);
    CHECK(page.find("ExplodingTensor") == std::string::npos);
    CHECK(page.find("<td>VanishingGradient:threshold=0.0065</td>") != std::string::npos);
    CHECK(run_cli("report " + p + " --out " + quote(html) + " --rule NoSuchRule").status == 2);
}

TEST_CASE("cli: errors that help: closest names, the steps there are, one form for every command", "[cli]") {
    const auto good = (cases_dir / "pt_train_eval" / "trial").string();
    const auto p = quote(good);
    SECTION("did you mean: a tensor, an option, a rule, a command, a worker") {
        const auto t = run_cli("value " + p + " MLP_fc1.weigth 0");
        CHECK(t.status == 2);
        CHECK(one_error_line(t));
        CHECK_THAT(t.err, Catch::Matchers::Contains("unknown tensor 'MLP_fc1.weigth'") && Catch::Matchers::Contains("did you mean 'MLP_fc1.weight'"));
        const auto r = run_cli("reductions " + p + " MLP_fc2.bais");
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Catch::Matchers::Contains("did you mean 'MLP_fc2.bias'"));
        const auto o = run_cli("summary " + p + " --jsn");
        CHECK(o.status == 2);
        CHECK(o.err == "smdebug summary: unknown option --jsn; did you mean '--json'?\n");
        const auto rule = run_cli("rule " + p + " ExplodingTensr");
        CHECK(rule.status == 2);
        CHECK(rule.err == "smdebug rule: unknown rule 'ExplodingTensr'; did you mean 'ExplodingTensor'? (`smdebug rules` lists them)\n");
        const auto c = run_cli("sumary " + p);
        CHECK(c.status == 2);
        CHECK_THAT(c.err, Catch::Matchers::StartsWith("smdebug: unknown command 'sumary'; did you mean 'summary'?"));
        const auto w = run_cli("value " + p + " MLP_fc1.bias 0 --worker worker0");
        CHECK(w.status == 2);
        CHECK_THAT(w.err, Catch::Matchers::Contains("did you mean 'worker_0'"));
    }
    SECTION("a step that does not exist names the last one there is") {
        Trial<AnyStore> trial(open_store(good), fast());
        const auto last = trial.steps(Mode::GLOBAL, true).back();
        const auto r = run_cli("value " + p + " CrossEntropyLoss_output_0 999");
        CHECK(r.status == 2);
        CHECK(one_error_line(r));
        CHECK_THAT(r.err, Catch::Matchers::Contains("step 999 of mode GLOBAL is not available") &&
                              Catch::Matchers::Contains("the last is " + std::to_string(last)));
        const auto e = run_cli("value " + p + " CrossEntropyLoss_output_0 99 --mode EVAL");
        CHECK(e.status == 2);
        CHECK_THAT(e.err, Catch::Matchers::Contains("the EVAL steps are 0, 1, 2, 3, the last is 3"));
    }
    SECTION("a step a tensor skipped: the steps it has; the sentences spaced") {
        const auto mw = quote((cases_dir / "multiworker_incomplete" / "trial").string());
        const auto r = run_cli("value " + mw + " act/relu 0");
        CHECK(r.status == 2);
        CHECK(one_error_line(r));
        CHECK(r.err.find("saved.This") == std::string::npos);
        CHECK_THAT(r.err, Catch::Matchers::Contains("Only its reductions were saved at this step") &&
                              Catch::Matchers::Contains("Its steps with data (a value or reductions): 0, 2, 4"));
    }
    SECTION("every command's errors are `smdebug <command>: message`, on one line") {
        test::TempDir empty("cli-empty");
        const auto missing = quote((empty.path / "nope").string());
        const std::vector<std::pair<std::string, std::string>> cases = {
            {"rule", "rule " + p + " VanishingGradient --param treshold=1"},
            {"rule", "rule " + p + " NoSuchRule"},
            {"rule", "rule " + p + " VanishingGradient --start-step x"},
            {"rule", "rule " + p},
            {"rule", "rule " + p + " VanishingGradient --bogus"},
            {"monitor", "monitor " + p + " --rule Nope"},
            {"summary", "summary " + missing},
            {"value", "value " + p + " nope 0"},
            {"watch", "watch " + p + " --tensor nope --reduction mean"},
            {"export", "export " + p + " --format xml --out x"},
            {"plot", "plot " + p + " --tensor nope --out " + quote((empty.path / "x.svg").string())},
            {"report", "report " + p + " --out " + quote((empty.path / "x.html").string()) + " --rule Nope"},
        };
        for (const auto& [command, args] : cases) {
            INFO("smdebug " << args);
            const auto r = run_cli(args);
            CHECK(r.status == 2);
            CHECK(lines(r.err).size() == 1);
            CHECK_THAT(r.err, Catch::Matchers::StartsWith("smdebug " + command + ": "));
        }
    }
}

TEST_CASE("cli: a one-line summary on success; watch --tensor of an unknown tensor is an error", "[cli]") {
    const auto good = (cases_dir / "pt_train_eval" / "trial").string();
    const auto p = quote(good);
    Trial<AnyStore> trial(open_store(good), fast());
    const auto steps = trial.steps();
    const auto rule = run_cli("rule " + p + " ExplodingTensor");
    CHECK(rule.status == 0);
    CHECK(rule.out.empty());
    CHECK(rule.err == "ExplodingTensor: checked " + std::to_string(steps.size()) + " steps (" + std::to_string(steps.front()) + ".." +
                          std::to_string(steps.back()) + ") of 19 tensors in " + trial.path() + "; did not fire\n");
    const auto fired = run_cli("rule " + p + " VanishingGradient --param threshold=0.0065");
    CHECK(fired.status == 1);
    std::set<std::string> firing_steps;  // a line per finding: "step <g> tensor ...", several at one step
    for (const auto& line : lines(fired.out)) firing_steps.insert(line.substr(0, line.find(' ', 5)));
    CHECK(lines(fired.out).size() == firing_steps.size());  // one line per step, listing its tensors
    CHECK(lines(fired.out).back() ==
          "step 6 (TRAIN step 6) tensor gradient/MLP_fc1.bias: mean(|x|)=0.0044183490972500294 < threshold 0.0065 (and 2 more tensors: "
          "gradient/MLP_fc1.weight, gradient/MLP_fc2.weight)");
    CHECK_THAT(fired.err, Catch::Matchers::EndsWith("; fired at " + std::to_string(firing_steps.size()) + " steps\n"));
    test::TempDir dir("cli-summary-line");
    const auto svg = (dir.path / "p.svg").string(), html = (dir.path / "r.html").string(), csv = (dir.path / "t.csv").string(),
               npy = (dir.path / "v.npy").string();
    const auto plot = run_cli("plot " + p + " --tensor '^MLP_fc1' --out " + quote(svg));
    CHECK(plot.status == 0);
    const auto series = cli::reduction_series(trial, trial.tensor_names(TensorNamesQuery{.regex = {"^MLP_fc1"}}), Reduction::mean, false, Mode::GLOBAL);
    std::size_t points = 0;
    for (const auto& s : series) points += s.points.size();
    REQUIRE(points > 0);
    CHECK(plot.err == "wrote " + svg + " (" + cli::human_bytes(static_cast<double>(fs::file_size(svg))) + "): mean of " +
                          std::to_string(series.size()) + " series, " + std::to_string(points) + " points\n");
    const auto rep = run_cli("report " + p + " --out " + quote(html));
    CHECK(rep.status == 0);
    CHECK_THAT(rep.err, Catch::Matchers::StartsWith("wrote " + html + " (") && Catch::Matchers::Contains("19 tensors"));
    const auto exp = run_cli("export " + p + " --format csv --out " + quote(csv));
    CHECK(exp.status == 0);
    CHECK(exp.err == "wrote " + csv + " (" + cli::human_bytes(static_cast<double>(fs::file_size(csv))) + "): csv\n");
    const auto val = run_cli("value " + p + " MLP_fc3.bias 0 --format npy --out " + quote(npy));
    CHECK(val.status == 0);
    CHECK_THAT(val.err, Catch::Matchers::EndsWith("): npy of MLP_fc3.bias at step 0, float32 (3,)\n"));
    // watch: an unknown tensor is an error naming it, not `nope mean=n/a` on every step
    const auto w = run_cli("watch " + p + " --tensor MLP_fc1.weigth --reduction mean");
    CHECK(w.status == 2);
    CHECK(w.out.empty());
    CHECK_THAT(w.err, Catch::Matchers::StartsWith("smdebug watch: unknown tensor 'MLP_fc1.weigth'") &&
                          Catch::Matchers::Contains("did you mean 'MLP_fc1.weight'"));
}

TEST_CASE("cli: an honest summary: workers that wrote against the collections file, shapes as lists, plurals; compact --remove leaves no folder", "[cli]") {
    test::TempDir dir("cli-honest");
    const auto copy = dir.path / "trial";
    fs::copy(cases_dir / "multiworker_incomplete" / "trial", copy, fs::copy_options::recursive);
    for (const auto& e : fs::recursive_directory_iterator(copy / "collections")) {
        if (!e.is_regular_file()) continue;
        auto text = read_text(e.path());
        const auto at = text.find("\"num_workers\": 3");
        REQUIRE(at != std::string::npos);
        text.replace(at, 16, "\"num_workers\": 1");
        std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << text;
    }
    const auto p = quote(copy.string());
    const auto workers = run_cli("workers " + p);
    REQUIRE(workers.status == 0);
    CHECK(lines(workers.out).size() == 4);  // three workers wrote; "expected workers: 1"
    const auto s = run_cli("summary " + p);
    REQUIRE(s.status == 0);
    CHECK_THAT(s.out, Catch::Matchers::Contains("workers    3: worker_0 worker_1 worker_2\n"
                                                "warning    3 workers wrote index files, but the collections file says 1"));
    const auto j = run_cli("summary " + p + " --json");
    REQUIRE(j.status == 0);
    const auto doc = boost::json::parse(j.out).as_object();
    CHECK(doc.at("workers").as_array().size() == 3);
    CHECK(doc.at("num_workers").as_int64() == 1);
    REQUIRE(doc.at("warnings").as_array().size() == 1);
    // shapes are lists, as dump gives them
    const auto good = quote((cases_dir / "pt_train_eval" / "trial").string());
    const auto pj = boost::json::parse(run_cli("summary " + good + " --json").out).as_object();
    bool seen = false;
    for (const auto& t : pj.at("tensors").as_array())
        if (t.as_object().at("name").as_string() == "MLP_fc1.bias") {
            CHECK(boost::json::serialize(t.as_object().at("shape")) == "[12]");
            seen = true;
        }
    CHECK(seen);
    CHECK(pj.at("warnings").as_array().empty());
    // plurals
    const auto one = run_cli("summary " + good + " --steps 0:1");
    REQUIRE(one.status == 0);
    CHECK_THAT(one.out, Catch::Matchers::Contains("steps      1 (global 0..0)\n") && Catch::Matchers::Contains("TRAIN: 1 step (0..0)\n"));
    CHECK_THAT(run_cli("summary " + good).out, Catch::Matchers::Contains("EVAL: 4 steps (0..3)\n"));
    // compact --remove: no empty manifest/all/ left behind
    CHECK(run_cli("compact " + p).status == 0);
    REQUIRE(fs::is_directory(copy / "manifest" / "all"));
    CHECK(run_cli("compact " + p + " --remove").out == "removed 1 manifest\n");
    CHECK(!fs::exists(copy / "manifest"));
}

TEST_CASE("cli: modes apart: plot, reductions, watch and the report keep a labelled series per mode", "[cli]") {
    const auto good = (cases_dir / "pt_train_eval" / "trial").string();
    const auto p = quote(good);
    Trial<AnyStore> trial(open_store(good), fast());
    const std::string loss = "CrossEntropyLoss_output_0";
    auto t = trial.tensor(loss);
    REQUIRE(!t.steps(Mode::TRAIN).empty());
    REQUIRE(!t.steps(Mode::EVAL).empty());
    test::TempDir dir("cli-modes");
    const auto svg = (dir.path / "loss.svg").string();
    REQUIRE(run_cli("plot " + p + " --tensor '^" + loss + "$' --out " + quote(svg)).status == 0);
    const auto chart = read_text(svg);
    for (Mode m : {Mode::TRAIN, Mode::EVAL}) {
        INFO(mode_name(m));
        CHECK(chart.find(">" + loss + " (" + std::string(mode_name(m)) + ")</text>") != std::string::npos);
    }
    const auto series = cli::reduction_series(trial, {loss}, Reduction::mean, false, Mode::GLOBAL);
    REQUIRE(series.size() >= 2);
    for (const auto& s : series) {  // each series holds the global steps of one mode only
        const auto mode_of = [&](double x) { return trial.mode_modestep(static_cast<std::int64_t>(x))->first; };
        for (const auto& [x, y] : s.points) CHECK(mode_of(x) == mode_of(s.points.front().first));
    }
    // one mode chosen: its mode steps on the axis, no mode labels
    REQUIRE(run_cli("plot " + p + " --tensor '^" + loss + "$' --mode EVAL --out " + quote(svg)).status == 0);
    const auto eval = read_text(svg);
    CHECK(eval.find(">EVAL step</text>") != std::string::npos);
    CHECK(eval.find("(TRAIN)") == std::string::npos);
    // reductions: every row labelled with its mode, each mode's steps together
    const auto j = run_cli("reductions " + p + " " + loss + " --reduction mean --json");
    REQUIRE(j.status == 0);
    const auto rows = boost::json::parse(j.out).as_object().at("rows").as_array();
    std::vector<std::string> modes;
    for (const auto& r : rows) modes.emplace_back(r.as_object().at("mode").as_string());
    CHECK(std::count(modes.begin(), modes.end(), "TRAIN") == static_cast<std::ptrdiff_t>(t.steps(Mode::TRAIN).size()));
    CHECK(std::count(modes.begin(), modes.end(), "EVAL") == static_cast<std::ptrdiff_t>(t.steps(Mode::EVAL).size()));
    std::vector<std::string> runs;
    for (const auto& m : modes)
        if (runs.empty() || runs.back() != m) runs.push_back(m);
    CHECK(runs.size() == std::set<std::string>(modes.begin(), modes.end()).size());  // one run per mode
    // watch --mode: that mode's steps only
    const auto w = run_cli("watch " + p + " --mode EVAL");
    REQUIRE(w.status == 0);
    const auto wl = lines(w.out);
    CHECK(wl.size() == trial.steps(Mode::EVAL).size());
    for (const auto& l : wl) CHECK(l.find(" EVAL ") != std::string::npos);
    // the report's charts
    const auto html = (dir.path / "r.html").string();
    REQUIRE(run_cli("report " + p + " --out " + quote(html)).status == 0);
    CHECK(read_text(html).find(loss + " (EVAL)</text>") != std::string::npos);
}

TEST_CASE("cli: readable terminal output: aligned columns, summarised values, natural order, human units, colour, no binary on a terminal", "[cli]") {
    require_program("script", "util-linux");
    test::TempDir dir("cli-readable");
    const auto folder = dir.path / "trial";
    {
        HookOptions o;
        o.save_all = true;
        o.save_config = SaveConfig(save_config_mode(1));
        Hook<LocalStore> hook(folder.string(), o);
        std::vector<float> big(64 * 64);
        for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) / 7.0f;
        for (int step = 0; step < 3; ++step) {
            hook.save_tensor("layer10", big.data(), Shape{64, 64});
            hook.save_tensor("layer2", std::vector<float>{1.0f / 3.0f, 2.0f});
            hook.save_tensor("layer1", std::vector<float>{1.0f});
            hook.next_step();
        }
        hook.close();
    }
    const auto p = quote(folder.string());
    // natural order
    CHECK(run_cli("tensors " + p).out == "layer1\nlayer2\nlayer10\n");
    // value: numpy's summary past 1000 elements, --full for all of them
    const auto v = run_cli("value " + p + " layer10 0");
    REQUIRE(v.status == 0);
    CHECK(v.out.size() < 600);
    CHECK(v.out.starts_with("[[0, 0.14285715, 0.2857143, ..., 8.714286, 8.857142, 9], [9.142858, "));
    CHECK_THAT(v.out, Catch::Matchers::Contains("], ..., [") && Catch::Matchers::EndsWith("(4096 elements, shape (64, 64); --full prints them all)\n"));
    const auto full = run_cli("value " + p + " layer10 0 --full");
    CHECK(full.out.find("...") == std::string::npos);
    CHECK(std::count(full.out.begin(), full.out.end(), ',') == 4095);
    // reductions: aligned columns, 6 significant digits; --precise the exact value
    const auto r = run_cli("reductions " + p + " layer2 --reduction mean");
    REQUIRE(r.status == 0);
    const auto rl = lines(r.out);
    REQUIRE(rl.size() == 4);
    CHECK(rl[0] == "step  mode    mode_step     mean");
    CHECK(rl[1] == "   0  GLOBAL          0  1.16667");
    for (const auto& l : rl) CHECK(l.size() == rl[0].size());
    const double exact = (static_cast<double>(1.0f / 3.0f) + 2.0) / 2.0;
    CHECK(lines(run_cli("reductions " + p + " layer2 --reduction mean --precise").out)[1].ends_with(cli::format_double(exact)));
    // human units
    const auto ver = run_cli("verify " + p);
    REQUIRE(ver.status == 0);
    CHECK_THAT(ver.out, Catch::Matchers::Contains("bytes 49188 (49.2 KB)\n"));
    CHECK(ver.out.find("GB/s") == std::string::npos);
    CHECK(cli::human_bytes(204800000) == "204.8 MB");
    CHECK(cli::human_bytes(812) == "812 B");
    // colour on a terminal only, and never with NO_COLOR
    const auto tty = [&](const std::string& env, const std::string& args) {
        const auto log = dir.path / "tty.log";
        const auto run = shell("script -qec " + quote(env + " SMDEBUG_TRAINING_END_DELAY_REFRESH=0 " + quote(cli_binary) + " " + args) + " " + quote(log.string()));
        return std::make_pair(run.status, read_text(log));
    };
    const auto gate = quote((cases_dir / "pt_train_eval" / "trial").string()) + " VanishingGradient --param threshold=0.0065";
    CHECK(tty("", "rule " + gate).second.find("\033[31mstep ") != std::string::npos);
    CHECK(tty("NO_COLOR=1", "rule " + gate).second.find("\033[") == std::string::npos);
    CHECK(run_cli("rule " + gate).out.find("\033[") == std::string::npos);
    // never binary to a terminal
    const auto npy = tty("", "value " + p + " layer2 0 --format npy");
    CHECK(npy.first == 2);
    CHECK_THAT(npy.second, Catch::Matchers::Contains("smdebug value: --format npy writes binary"));
    CHECK(npy.second.find("NUMPY") == std::string::npos);
    CHECK(run_cli("value " + p + " layer2 0 --format npy").out.starts_with("\x93NUMPY"));
}

TEST_CASE("cli: plots a data scientist would keep: log decades and minor ticks, 50 colours, few markers, outliers clipped, sized to content", "[cli][render]") {
    const auto python = numpy_python();
    test::TempDir dir("cli-plots");
    SECTION("a log axis over less than a decade fills the chart; minor ticks between decades") {
        cli::plot::Series s{"s", {}};
        for (int k = 0; k < 20; ++k) s.points.emplace_back(k, 1.2 + 0.03 * k);
        cli::plot::LineChartSpec spec;
        spec.log_y = true;
        const auto L = cli::plot::line_chart_layout(spec, {s});
        CHECK(L.y.lo > 1.0);
        CHECK(L.y.hi < 2.0);
        CHECK(cli::plot::ticks(L.y).size() >= 3);  // 1.2 ... labelled inside the range
        cli::plot::Series wide{"w", {}};
        for (int k = 0; k <= 40; ++k) wide.points.emplace_back(k, std::pow(10.0, k / 10.0));  // 1 to 1e4
        const auto W = cli::plot::line_chart_layout(spec, {wide});
        CHECK(cli::plot::ticks(W.y) == std::vector<double>{1, 10, 100, 1000, 10000});
        CHECK(cli::plot::minor_ticks(W.y).size() == 4 * 8);
        const auto svg = cli::plot::render_line_chart(spec, {wide});
        std::size_t minor = 0;
        for (auto at = svg.find("stroke=\"#666666\""); at != std::string::npos; at = svg.find("stroke=\"#666666\"", at + 1)) ++minor;
        CHECK(minor == 32);
    }
    SECTION("50 series: 50 colours told apart, every one in the legend, the chart as tall as its legend") {
        std::vector<std::array<int, 3>> colours;
        for (std::size_t i = 0; i < 50; ++i) colours.push_back(hex_colour(cli::svg::colour(i)));
        for (std::size_t i = 0; i < 50; ++i)
            for (std::size_t k = i + 1; k < 50; ++k) {
                INFO(i << " " << cli::svg::colour(i) << " and " << k << " " << cli::svg::colour(k));
                CHECK(!close_to(colours[i], colours[k], 45));
            }
        std::vector<cli::plot::Series> many;
        for (int i = 0; i < 50; ++i) {
            cli::plot::Series s{"tensor_" + std::to_string(i), {}};
            for (int k = 0; k < 10; ++k) s.points.emplace_back(k, i + 0.1 * k);
            many.push_back(std::move(s));
        }
        const auto L = cli::plot::line_chart_layout(cli::plot::LineChartSpec{}, many);
        CHECK(L.height >= 44 + 50 * cli::plot::legend_row);
        const auto svg = cli::plot::render_line_chart(cli::plot::LineChartSpec{}, many);
        for (int i = 0; i < 50; ++i) CHECK(svg.find(">tensor_" + std::to_string(i) + "</text>") != std::string::npos);
        std::ofstream(dir.path / "many.svg") << svg;
        const auto img = render_svg(dir.path / "many.svg", python);
        CHECK(img.height == static_cast<int>(L.height));
        CHECK(count_colour(img, colours[49], static_cast<int>(L.right), 0, img.width, img.height) > 50);  // the last swatch
    }
    SECTION("1,000 steps: no dot per point, a small file; a few points keep their dots") {
        cli::plot::Series s{"long", {}};
        for (int k = 0; k < 1000; ++k) s.points.emplace_back(k, std::sin(k / 50.0));
        const auto svg = cli::plot::render_line_chart(cli::plot::LineChartSpec{}, {s});
        CHECK(svg.find("<circle") == std::string::npos);
        CHECK(svg.size() < 30000);
        std::ofstream(dir.path / "long.svg") << svg;
        cli::plot::Series few{"few", {}};
        for (int k = 0; k < 20; ++k) few.points.emplace_back(k, k);
        const auto small = cli::plot::render_line_chart(cli::plot::LineChartSpec{}, {few});
        std::size_t dots = 0;
        for (auto at = small.find("<circle"); at != std::string::npos; at = small.find("<circle", at + 1)) ++dots;
        CHECK(dots == 20);
    }
    SECTION("one huge value is clipped with a note; the other lines keep the chart") {
        cli::plot::Series a{"a", {}}, b{"b", {}};
        for (int k = 0; k < 100; ++k) a.points.emplace_back(k, 1 + 0.01 * k), b.points.emplace_back(k, 2 - 0.01 * k);
        a.points[50].second = 1e299;
        const auto L = cli::plot::line_chart_layout(cli::plot::LineChartSpec{}, {a, b});
        CHECK(L.y.hi <= 3);
        CHECK(L.clipped_high == 1);
        const auto svg = cli::plot::render_line_chart(cli::plot::LineChartSpec{}, {a, b});
        CHECK(svg.find("1 point(s) above 2 clipped (max 1e+299)") != std::string::npos);
        std::ofstream(dir.path / "outlier.svg") << svg;
        const auto img = render_svg(dir.path / "outlier.svg", python);
        const auto blue = hex_colour(cli::svg::colour(0));
        CHECK(colour_near(img, L.x.to_pixel(20), L.y.to_pixel(1.2), blue));  // the bulk is drawn where it belongs
    }
}

}  // namespace smdebug_test_cli
