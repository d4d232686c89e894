// std::thread reaches pthread_create through libstdc++: the recorder must
// name this program, not libstdc++, as the creator.
#include <cstdio>
#include <thread>
#include <vector>

int main() {
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([i] {
            volatile double x = 0;
            for (int k = 0; k < 100000; ++k) x = x + k * i;
        });
    for (auto& t : threads) t.join();
    std::printf("std_threads: 3 threads joined\n");
    return 0;
}
