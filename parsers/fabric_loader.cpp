#include "parsers/fabric_loader.hpp"

#include <algorithm>
#include <filesystem>

#include "parsers/ibnetdiscover_ports.hpp"
#include "parsers/ibnetdiscover_topology.hpp"
#include "parsers/ibroute.hpp"
#include "parsers/input_file.hpp"
#include "parsers/slurm_topology_conf.hpp"

namespace stacksage {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kSubnetPrefix = "ib-subnet-";
constexpr std::size_t kMaxRouteFiles = 65536;

// "ib-subnet-fe80:0000:0000:0000.txt" -> "fe80:0000:0000:0000"; "" otherwise.
std::string subnet_of(const fs::path& file) {
    const std::string stem = file.stem().string();
    if (stem.starts_with(kSubnetPrefix)) return stem.substr(kSubnetPrefix.size());
    return {};
}

Status read_file(const std::string& path, std::string_view subnet, Fabric& fabric, std::vector<std::string>& notes,
                 std::string& text) {
    if (auto problem = read_input_file(path, kMaxFabricFileBytes, "a fabric file", text))
        return make_error(path + ": " + problem->reason);
    return read_fabric_text(text, path, subnet, fabric, notes);
}

Status read_routes(const fs::path& folder, std::string_view subnet, LoadedFabric& out, std::string& text) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) return Ok{};
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        if (entry.path().filename().string().starts_with("ibroute")) files.push_back(entry.path());
        if (files.size() > kMaxRouteFiles)
            return make_error(folder.string() + ": more than " + std::to_string(kMaxRouteFiles) +
                              " forwarding tables; a subnet has at most one per switch");
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        if (auto problem = read_input_file(f.string(), kMaxFabricFileBytes, "a fabric file", text))
            return make_error(f.string() + ": " + problem->reason);
        if (!looks_like_ibroute(text)) {
            out.notes.push_back(f.string() + ": not an ibroute table; left out");
            continue;
        }
        Status s = read_ibroute(text, f.string(), subnet, out.fabric, out.notes);
        if (!s) return s;
        ++out.forwarding_tables;
    }
    return Ok{};
}
}  // namespace

Status read_fabric_text(std::string_view text, std::string_view name, std::string_view subnet, Fabric& fabric,
                        std::vector<std::string>& notes) {
    if (looks_like_ibnetdiscover_ports(text)) return read_ibnetdiscover_ports(text, name, subnet, fabric);
    if (looks_like_ibnetdiscover_topology(text)) return read_ibnetdiscover_topology(text, name, subnet, fabric);
    if (looks_like_ibroute(text)) return read_ibroute(text, name, subnet, fabric, notes);
    if (looks_like_slurm_topology_conf(text)) return read_slurm_topology_conf(text, name, fabric);
    return make_error(std::string(name) +
                      ": neither form of ibnetdiscover output (the topology file it writes by default, or the "
                      "ports report of -p), nor an ibroute table, nor Slurm's topology.conf; give the output of "
                      "`ibnetdiscover` or `ibnetdiscover -p`");
}

Result<LoadedFabric> load_fabric(const std::string& path) {
    LoadedFabric out;
    std::string text;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        fs::path root = path;
        if (fs::is_directory(root / "ib-raw", ec)) root /= "ib-raw";
        std::vector<fs::path> subnets;
        for (const auto& entry : fs::directory_iterator(root, ec))
            if (entry.path().filename().string().starts_with(kSubnetPrefix) && entry.path().extension() == ".txt")
                subnets.push_back(entry.path());
        std::sort(subnets.begin(), subnets.end());
        if (subnets.empty())
            return make_error(path + ": no ib-subnet-<prefix>.txt in this directory (nor in its ib-raw/); give "
                                     "the file ibnetdiscover wrote, or netloc's raw directory");
        for (const fs::path& f : subnets) {
            Status s = read_file(f.string(), subnet_of(f), out.fabric, out.notes, text);
            if (!s) return s.error();
            out.fabric.sources.push_back(f.string());
        }
        for (const fs::path& f : subnets) {
            const std::string subnet = subnet_of(f);
            Status s = read_routes(root / ("ibroutes-" + subnet), subnet, out, text);
            if (!s) return s.error();
        }
    } else {
        const std::string subnet = subnet_of(path);
        Status s = read_file(path, subnet, out.fabric, out.notes, text);
        if (!s) return s.error();
        out.fabric.sources.push_back(path);
        if (!subnet.empty()) {
            Status r = read_routes(fs::path(path).parent_path() / ("ibroutes-" + subnet), subnet, out, text);
            if (!r) return r.error();
        }
    }
    if (out.fabric.nodes().empty())
        return make_error(path + ": the fabric holds no switch or adapter; give the output of `ibnetdiscover`");
    out.fabric.finish();
    return out;
}

}  // namespace stacksage
