// parse_launch_command: what mpirun's, mpiexec's and srun's command lines
// say about the job (ranks, hosts), read up to the application's first word.
#include <gtest/gtest.h>

#include "analysis/launch_command.hpp"

using namespace stacksage;
using Args = std::vector<std::string>;

TEST(LaunchCommand, MpirunRanksHostsAndTheProgram) {
    const LaunchCommand c =
        parse_launch_command({"/usr/bin/mpirun", "--mca", "btl", "tcp,self", "-np", "4", "--map-by", "ppr:2:node",
                              "--host", "a:2,b:2", "--hostfile", "hosts.txt", "./app", "-n", "9"});
    EXPECT_TRUE(c.is_launcher);
    EXPECT_EQ(c.launcher, "mpirun");
    EXPECT_EQ(c.ranks, 4);  // the application's own -n 9 is not the launcher's
    EXPECT_EQ(c.hosts, (Args{"a", "b"}));
    EXPECT_EQ(c.hostfile, "hosts.txt");
    EXPECT_EQ(c.program_args, (Args{"./app", "-n", "9"}));
    EXPECT_EQ(c.launcher_args.back(), "hosts.txt");
}

TEST(LaunchCommand, HydraAndEnvironmentPrefixes) {
    const LaunchCommand c = parse_launch_command(
        {"env", "OMP_NUM_THREADS=2", "mpiexec.hydra", "-genv", "A", "1", "-n", "8", "-hosts", "n1,n2", "./app"});
    EXPECT_TRUE(c.is_launcher);
    EXPECT_EQ(c.ranks, 8);
    EXPECT_EQ(c.hosts, (Args{"n1", "n2"}));
    EXPECT_EQ(c.program_args, (Args{"./app"}));
}

TEST(LaunchCommand, SrunTasksNodeListAndExport) {
    LaunchCommand c =
        parse_launch_command({"srun", "-n8", "-w", "n[01-02]", "--export=NONE", "--cpu-bind=cores", "./app"});
    EXPECT_TRUE(c.slurm);
    EXPECT_EQ(c.ranks, 8);
    EXPECT_EQ(c.hosts, (Args{"n01", "n02"}));
    EXPECT_TRUE(c.export_none);
    EXPECT_EQ(c.program_args, (Args{"./app"}));
    c = parse_launch_command({"srun", "--ntasks", "4", "--export=ALL,FOO=1", "-c", "2", "./app"});
    EXPECT_EQ(c.ranks, 4);
    EXPECT_FALSE(c.export_none);
    EXPECT_EQ(c.program_args, (Args{"./app"}));
}

TEST(LaunchCommand, OtherCommandsAreNoLaunch) {
    EXPECT_FALSE(parse_launch_command({"./app", "-np", "4"}).is_launcher);
    EXPECT_FALSE(parse_launch_command({}).is_launcher);
    EXPECT_EQ(parse_launch_command({"mpirun", "./app"}).ranks, -1);
}

TEST(LaunchCommand, SplitsACommandLineAsTheLoaderJoinsIt) {
    EXPECT_EQ(split_command_line("mpirun -np 2 sh -c 'exec ./app '\\''x'\\'''"),
              (Args{"mpirun", "-np", "2", "sh", "-c", "exec ./app 'x'"}));
    EXPECT_EQ(split_command_line("  a  b "), (Args{"a", "b"}));
}

// The launchers' option tables are shared with `stacksage run`
// (core/formats/launcher_options.hpp): every option either side knows to
// take a value is skipped with it, and a flag is not given the next word.
TEST(LaunchCommand, OptionsOfTheSharedTablesFindTheProgram) {
    EXPECT_EQ(parse_launch_command({"mpirun", "--prtemca", "a", "b", "-N", "2", "--cpu-set", "0,1", "./app"})
                  .program_args,
              (Args{"./app"}));
    EXPECT_EQ(parse_launch_command({"mpiexec.hydra", "-rr", "-localhost", "n1", "-n", "2", "./app"}).program_args,
              (Args{"./app"}));
    EXPECT_EQ(parse_launch_command({"srun", "-S", "2", "-b", "now", "-n", "2", "./app"}).program_args,
              (Args{"./app"}));
    // An optional argument only follows '=': --exclusive is a flag here.
    LaunchCommand c = parse_launch_command({"srun", "--exclusive", "./app"});
    EXPECT_EQ(c.program_args, (Args{"./app"}));
    c = parse_launch_command({"srun", "--exclusive=user", "-I5", "./app"});
    EXPECT_EQ(c.program_args, (Args{"./app"}));
}
