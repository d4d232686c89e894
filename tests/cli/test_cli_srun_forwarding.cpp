// How `stacksage run` rewrites srun, salloc and sbatch so that the recorder's
// variables reach every task (cli/srun_forwarding.hpp): each --export form
// of Slurm 22.05, the variables that stand for it, and the words that only
// look like options (the application's own arguments).
#include "cli/srun_forwarding.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

using namespace stacksage::cli;

namespace {

const RecorderVariables kRecorder{"/opt/ss/libstacksage-preload.so", {"STACKSAGE_OUTPUT", "STACKSAGE_MODEL"}};
const std::string kCarried = "LD_PRELOAD=/opt/ss/libstacksage-preload.so,STACKSAGE_OUTPUT,STACKSAGE_MODEL";

struct Fake {
    std::map<std::string, std::string, std::less<>> variables;
    EnvironmentLookup lookup() const {
        return [this](std::string_view name) -> std::optional<std::string> {
            auto it = variables.find(name);
            if (it == variables.end()) return std::nullopt;
            return it->second;
        };
    }
};

SlurmForwarding forward(const std::vector<std::string>& command, const Fake& env = {}) {
    std::optional<SlurmForwarding> f = forward_through_slurm(command, env.lookup(), kRecorder);
    EXPECT_TRUE(f.has_value());
    return f ? *f : SlurmForwarding{};
}

using Words = std::vector<std::string>;

}  // namespace

TEST(SrunForwarding, OnlySlurmLaunchersAreRewritten) {
    EXPECT_FALSE(forward_through_slurm({"mpirun", "--export=NONE", "./app"}, Fake{}.lookup(), kRecorder));
    EXPECT_FALSE(forward_through_slurm({"./srun-like"}, Fake{}.lookup(), kRecorder));
    EXPECT_EQ(slurm_launcher_of({"/usr/bin/srun", "x"}), "srun");
    EXPECT_EQ(slurm_launcher_of({"salloc"}), "salloc");
    EXPECT_EQ(slurm_launcher_of({"sbatch", "job.sh"}), "sbatch");
    EXPECT_EQ(slurm_launcher_of({}), "");
}

TEST(SrunForwarding, TheDefaultExportNeedsNothing) {
    const Words command{"srun", "-N", "2", "-n", "2", "./app"};
    SlurmForwarding f = forward(command);
    EXPECT_EQ(f.command, command);
    EXPECT_TRUE(f.environment.empty());
    EXPECT_TRUE(f.notes.empty());
}

TEST(SrunForwarding, ExportNoneBecomesTheRecordersVariablesAlone) {
    SlurmForwarding f = forward({"srun", "--export=NONE", "-N", "2", "./app"});
    EXPECT_EQ(f.command, (Words{"srun", "--export=" + kCarried, "-N", "2", "./app"}));
    ASSERT_EQ(f.notes.size(), 1u);
    EXPECT_NE(f.notes[0].find("--export=NONE"), std::string::npos) << f.notes[0];
    // The value as a word of its own, NIL, any case.
    EXPECT_EQ(forward({"/usr/bin/srun", "--export", "NONE", "./app"}).command,
              (Words{"/usr/bin/srun", "--export", kCarried, "./app"}));
    EXPECT_EQ(forward({"srun", "--export=nil", "./app"}).command, (Words{"srun", "--export=" + kCarried, "./app"}));
    // srun ignores variables listed after NONE: so does the rewrite.
    EXPECT_EQ(forward({"srun", "--export=NONE,FOO", "./app"}).command,
              (Words{"srun", "--export=" + kCarried, "./app"}));
    // getopt_long takes an unambiguous prefix.
    EXPECT_EQ(forward({"srun", "--expo=NONE", "./app"}).command, (Words{"srun", "--expo=" + kCarried, "./app"}));
}

TEST(SrunForwarding, AListKeepsWhatTheUserListedAndAddsTheRecorder) {
    EXPECT_EQ(forward({"srun", "--export=FOO,BAR=1", "./app"}).command,
              (Words{"srun", "--export=FOO,BAR=1," + kCarried, "./app"}));
    // A preload of the user's own stays, behind the recorder.
    EXPECT_EQ(forward({"srun", "--export=LD_PRELOAD=/u/x.so,FOO", "./app"}).command,
              (Words{"srun",
                     "--export=LD_PRELOAD=/opt/ss/libstacksage-preload.so:/u/x.so,FOO,STACKSAGE_OUTPUT,STACKSAGE_MODEL",
                     "./app"}));
    // A listed LD_PRELOAD by name carries the caller's value, which has the recorder.
    EXPECT_EQ(forward({"srun", "--export=LD_PRELOAD,STACKSAGE_OUTPUT=/elsewhere", "./app"}).command,
              (Words{"srun", "--export=LD_PRELOAD,STACKSAGE_OUTPUT,STACKSAGE_MODEL", "./app"}));
    // Nothing twice.
    const Words complete{"srun", "--export=FOO," + kCarried, "./app"};
    SlurmForwarding f = forward(complete);
    EXPECT_EQ(f.command, complete);
    EXPECT_TRUE(f.notes.empty());
}

TEST(SrunForwarding, AllExportsEverythingAlready) {
    for (const char* value : {"ALL", "all", "ALL,FOO=1", "FOO,ALL"}) {
        const Words command{"srun", std::string("--export=") + value, "./app"};
        EXPECT_EQ(forward(command).command, command) << value;
    }
}

TEST(SrunForwarding, TheApplicationsArgumentsAreNotSrunsOptions) {
    // Words after the program are its own, whatever they look like.
    for (const Words& command : {
             Words{"srun", "-N", "2", "-n", "2", "./app", "--export=NONE"},
             Words{"srun", "-w", "node1", "./app", "--export=NONE"},
             Words{"srun", "-lN2", "./app", "--export", "NONE"},
             Words{"srun", "-l", "-N", "2", "--cpu-bind", "cores", "./app", "--export=NONE"},
             Words{"srun", "--", "./app", "--export=NONE"},
             Words{"srun", "--mpi", "none", "--nodelist", "node1", "./app", "--export=NONE"},
         }) {
        SlurmForwarding f = forward(command);
        EXPECT_EQ(f.command, command) << command[1];
        EXPECT_TRUE(f.notes.empty());
    }
    // An option's value is not the program: the --export after it is srun's.
    EXPECT_EQ(forward({"srun", "-J", "job", "--export=NONE", "./app"}).command,
              (Words{"srun", "-J", "job", "--export=" + kCarried, "./app"}));
    // --kill-on-bad-exit takes its value only after '=': "--export" that follows is an option.
    EXPECT_EQ(forward({"srun", "-K", "--export=NONE", "./app"}).command,
              (Words{"srun", "-K", "--export=" + kCarried, "./app"}));
}

TEST(SrunForwarding, TheExportVariablesAreRewrittenWhereTheCommandLineSaysNothing) {
    Fake env;
    env.variables["SLURM_EXPORT_ENV"] = "NONE";
    SlurmForwarding f = forward({"srun", "-n", "2", "./app"}, env);
    ASSERT_EQ(f.environment.size(), 1u);
    EXPECT_EQ(f.environment[0].name, "SLURM_EXPORT_ENV");
    EXPECT_EQ(f.environment[0].value, kCarried);
    ASSERT_EQ(f.notes.size(), 1u);
    EXPECT_NE(f.notes[0].find("SLURM_EXPORT_ENV=NONE"), std::string::npos) << f.notes[0];
    // SRUN_EXPORT_ENV overrides SLURM_EXPORT_ENV: it is the one to rewrite.
    env.variables["SRUN_EXPORT_ENV"] = "FOO";
    f = forward({"srun", "./app"}, env);
    ASSERT_EQ(f.environment.size(), 1u);
    EXPECT_EQ(f.environment[0].name, "SRUN_EXPORT_ENV");
    EXPECT_EQ(f.environment[0].value, "FOO," + kCarried);
    // The command line overrides both.
    f = forward({"srun", "--export=ALL", "./app"}, env);
    EXPECT_TRUE(f.environment.empty());
    EXPECT_TRUE(f.notes.empty());
}

TEST(SrunForwarding, EachComponentOfAHeterogeneousStep) {
    Fake env;
    env.variables["SLURM_EXPORT_ENV"] = "NONE";
    SlurmForwarding f = forward({"srun", "-n1", "--export=NONE", "./a", "x", ":", "-n1", "./b", "--export=NONE"}, env);
    EXPECT_EQ(f.command,
              (Words{"srun", "-n1", "--export=" + kCarried, "./a", "x", ":", "-n1", "./b", "--export=NONE"}));
    // The second component reads the environment.
    ASSERT_EQ(f.environment.size(), 1u);
    EXPECT_EQ(f.environment[0].name, "SLURM_EXPORT_ENV");
}

TEST(SrunForwarding, APreloadPathWithACommaTravelsByName) {
    const RecorderVariables odd{"/opt/a,b/libstacksage-preload.so", {"STACKSAGE_OUTPUT"}};
    EXPECT_EQ(export_value_with_recorder("NONE", odd), "LD_PRELOAD,STACKSAGE_OUTPUT");
}

TEST(SallocForwarding, ItsSrunIsRewritten) {
    SlurmForwarding f =
        forward({"salloc", "-N", "2", "-w", "node1,node2", "srun", "--export=NONE", "-N", "1", "./app"});
    EXPECT_EQ(f.command,
              (Words{"salloc", "-N", "2", "-w", "node1,node2", "srun", "--export=" + kCarried, "-N", "1", "./app"}));
    EXPECT_EQ(f.notes.size(), 1u);
}

TEST(SallocForwarding, AShellOrScriptGetsTheVariablesAndANote) {
    Fake env;
    env.variables["SLURM_EXPORT_ENV"] = "NONE";
    SlurmForwarding f = forward({"salloc", "-N", "2", "./job.sh"}, env);
    EXPECT_EQ(f.command, (Words{"salloc", "-N", "2", "./job.sh"}));
    ASSERT_EQ(f.environment.size(), 1u);
    EXPECT_EQ(f.environment[0].value, kCarried);
    bool said = false;
    for (const std::string& n : f.notes) said |= n.find("srun ... stacksage run -- ./app") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(SbatchForwarding, ExportAndTheScriptsOwnSetting) {
    SlurmForwarding f = forward({"sbatch", "--export=NONE", "-N", "2", "job.sh", "--export=NONE"});
    EXPECT_EQ(f.command, (Words{"sbatch", "--export=" + kCarried, "-N", "2", "job.sh", "--export=NONE"}));
    bool queued = false;
    for (const std::string& n : f.notes) queued |= n.find("returns when the job is queued") != std::string::npos;
    EXPECT_TRUE(queued);
    // --wait: sbatch returns when the job has ended.
    f = forward({"sbatch", "--wait", "--export=FOO", "job.sh"});
    EXPECT_EQ(f.command, (Words{"sbatch", "--wait", "--export=FOO," + kCarried, "job.sh"}));
    for (const std::string& n : f.notes) EXPECT_EQ(n.find("queued"), std::string::npos) << n;
    // --wait-all-nodes takes a value, --wait is exact, not its prefix.
    f = forward({"sbatch", "--wait-all-nodes", "1", "--wait", "--export=NONE", "job.sh"});
    EXPECT_EQ(f.command, (Words{"sbatch", "--wait-all-nodes", "1", "--wait", "--export=" + kCarried, "job.sh"}));
    for (const std::string& n : f.notes) EXPECT_EQ(n.find("queued"), std::string::npos) << n;
    // SBATCH_EXPORT stands for --export.
    Fake env;
    env.variables["SBATCH_EXPORT"] = "NONE";
    f = forward({"sbatch", "-W", "job.sh"}, env);
    ASSERT_EQ(f.environment.size(), 1u);
    EXPECT_EQ(f.environment[0].name, "SBATCH_EXPORT");

    // #SBATCH --export=NONE in the script: the command line overrides it.
    char path[] = "/tmp/stacksage-sbatch-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    std::ofstream(path) << "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --export=NONE\nsrun ./app\n";
    f = forward({"sbatch", "-W", path});
    EXPECT_EQ(f.command, (Words{"sbatch", "--export=" + kCarried, "-W", path}));
    std::ofstream(path) << "#!/bin/bash\n#SBATCH -N 2\nsrun ./app\n#SBATCH --export=NONE\n";
    f = forward({"sbatch", "-W", path});  // after the first command: not a directive
    EXPECT_EQ(f.command, (Words{"sbatch", "-W", path}));
    unlink(path);
}
