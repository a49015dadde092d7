// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

//go:build ignore

// The constraint above keeps the go tool from treating this directory as a
// cgo package; the file is built on its own with gcc (see below).

/*
 * fakenvml.c - a scripted stand-in for libnvidia-ml.so.1.
 *
 * Built as a shared library named libnvidia-ml.so.1, it lets the collector's
 * end-to-end tests and the demo drive the real go-nvml cgo path on a machine
 * without an NVIDIA GPU.  Every value it reports comes from a scenario file
 * (FAKE_NVML_SCENARIO) evaluated against a scenario clock that starts when
 * nvmlInit takes the reference count from zero to one and runs
 * FAKE_NVML_TIME_SCALE times faster than the wall clock.
 *
 * The exported functions follow the C ABI of the NVML header shipped with
 * go-nvml v0.13.4-1 (pkg/nvml/nvml.h): same symbol names, argument lists,
 * return codes, enum values and struct layouts.  The header itself is not
 * used; the handful of types needed are declared below and their sizes are
 * pinned with static assertions.
 *
 * Build:
 *   gcc -shared -fPIC -O2 -Wall -Wextra -Werror -std=gnu11 \
 *       -o libnvidia-ml.so.1 tests/fakenvml/fakenvml.c -lpthread -lm
 *
 * See README.md next to this file for the scenario format.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define API __attribute__((visibility("default")))

/* ------------------------------------------------------------------------ */
/* ABI: return codes, enums, handles and structs                             */
/* ------------------------------------------------------------------------ */

typedef enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* Enum-typed parameters are plain ints in the C ABI. */
typedef int nvmlEnum_t;

enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
enum { NVML_CLOCK_ID_CURRENT = 0 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
enum { NVML_PSTATE_UNKNOWN = 32 };

#define EVENT_SINGLE_BIT_ECC 0x1ULL
#define EVENT_DOUBLE_BIT_ECC 0x2ULL
#define EVENT_PSTATE 0x4ULL
#define EVENT_XID 0x8ULL
#define EVENT_CLOCK 0x10ULL
#define SUPPORTED_EVENTS \
    (EVENT_SINGLE_BIT_ECC | EVENT_DOUBLE_BIT_ECC | EVENT_PSTATE | EVENT_XID | EVENT_CLOCK)

/* Clock event ("throttle") reasons 0x1 .. 0x100 that a data-centre GPU reports. */
#define SUPPORTED_CLOCK_EVENT_REASONS 0x1FFULL

#define INVALID_INSTANCE_ID 0xFFFFFFFFu
#define NVML_GPM_SUPPORT_VERSION 1u
#define ENC_DEC_SAMPLING_PERIOD_US 167000u

/* Handles are single-pointer structs, exactly as in go-nvml's header.  The
 * struct tags are the header's; their contents are this library's own. */
struct nvmlDevice_st;
struct nvmlEventSet_st;
struct nvmlGpmSample_st;
typedef struct { struct nvmlDevice_st *handle; } nvmlDevice_t;
typedef struct { struct nvmlEventSet_st *handle; } nvmlEventSet_t;
typedef struct { struct nvmlGpmSample_st *handle; } nvmlGpmSample_t;

typedef struct {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

typedef struct {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t; /* also nvmlProcessInfo_t, used by the _v3 functions */

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

typedef struct {
    unsigned int version;
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct {
    unsigned int version;
    nvmlEnum_t sensorType;
    int temperature;
} nvmlTemperature_t;

_Static_assert(sizeof(nvmlDevice_t) == sizeof(void *), "handle ABI");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t ABI");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t ABI");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t ABI");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t ABI");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t ABI");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t ABI");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t ABI");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8, "sample ABI");
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t ABI");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t ABI");
_Static_assert(sizeof(nvmlTemperature_t) == 12, "nvmlTemperature_t ABI");

/* NVML_STRUCT_VERSION(Memory, 2) and (Temperature, 1). */
#define MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
#define TEMPERATURE_V1_VERSION ((unsigned int)(sizeof(nvmlTemperature_t) | (1u << 24)))

/* ------------------------------------------------------------------------ */
/* Scenario model                                                            */
/* ------------------------------------------------------------------------ */

#define MAX_GPUS 16
#define MAX_MIGS 64
/* 1024: the load benchmark (bench/load) runs 8 GPUs x 64 processes, and a
 * busy node with MPS or many small jobs may well list more than 256. */
#define MAX_PROCS 1024
#define MAX_THROTTLES 128
#define MAX_XIDS 256
#define MAX_ECC_EVENTS 128
#define MAX_GROWS 256
#define MAX_RESETS 64
#define MAX_LOSTS (MAX_GPUS * 4)
#define MAX_EVENT_SETS 32
#define UTIL_HISTORY_SECONDS 20 /* process utilization samples kept per process */
#define STR_MAX 96

typedef struct {
    int defined;
    int line;
    char uuid[STR_MAX];
    char name[STR_MAX];
    unsigned int pci_domain, pci_bus, pci_device;
    unsigned int pci_device_id, pci_subsystem_id;
    double memory_total, memory_reserved, memory_used; /* bytes */
    double util, util_amplitude, util_period, mem_util;
    double enc_util, dec_util;
    double temp, temp_slope, temp_max; /* temp_max < 0: no cap */
    double power_w, power_limit_w, energy_offset_mj;
    unsigned int sm_clock, mem_clock, graphics_clock, video_clock;
    unsigned int max_sm_clock, max_mem_clock, max_graphics_clock, max_video_clock;
    unsigned int pcie_tx_kbps, pcie_rx_kbps;
    int ecc; /* 1 enabled, 0 disabled, -1 not supported */
    unsigned long long ecc_corrected, ecc_uncorrected;
    unsigned long long ecc_corrected_aggregate, ecc_uncorrected_aggregate;
    int persistence; /* 1, 0, -1 not supported */
    int pstate;      /* 0..15, -1 not supported */
    int fan;         /* percent, -1 not supported */
    int minor;
    int mig;         /* -1 not supported, 0 disabled, 1 enabled */
    int max_mig_devices;
    int cc_major, cc_minor;
    char unsupported[512]; /* ",GetX,GetY," */
} gpu_cfg;

typedef struct {
    int line;
    int gpu;
    int index;
    char uuid[STR_MAX];
    char name[STR_MAX];
    unsigned int gpu_instance, compute_instance;
    double memory_total, memory_reserved, memory_used;
} mig_cfg;

typedef struct {
    int line;
    int gpu;
    unsigned int pid;
    double memory, growth; /* bytes, bytes per scenario second */
    double start, stop;    /* stop < 0: forever */
    unsigned int sm_util, mem_util, enc_util, dec_util;
    int graphics;
    unsigned int gpu_instance, compute_instance;
    char name[64];
} proc_cfg;

typedef struct {
    int line;
    int gpu;
    double at, until; /* until < 0: forever */
    unsigned long long reasons;
    unsigned int sm_clock; /* 0: unchanged */
} throttle_cfg;

typedef struct {
    int line;
    int gpu;
    double at;
    unsigned long long code;
} xid_cfg;

/* A `grow` record: from `at` on, the process's memory grows at `rate`
   bytes per scenario second. gpu < 0: every process record of the pid. */
typedef struct {
    int line;
    int gpu;
    unsigned int pid;
    double at, rate;
} grow_cfg;

/* A `reset` or `lost` record: a GPU reset (volatile ECC counters cleared,
   a lost GPU back), or the GPU lost, from `at` on. */
typedef struct {
    int line;
    int gpu;
    double at;
} gpu_event_cfg;

/* An `ecc` record: errors that add to a GPU's ECC counters from `at` on. */
typedef struct {
    int line;
    int gpu;
    double at;
    unsigned long long corrected, uncorrected;
} ecc_cfg;

typedef struct {
    char driver_version[80];
    char nvml_version[80];
    int cuda_version;
    int gpu_count;
    gpu_cfg gpus[MAX_GPUS];
    int mig_count;
    mig_cfg migs[MAX_MIGS];
    int proc_count;
    proc_cfg procs[MAX_PROCS];
    int throttle_count;
    throttle_cfg throttles[MAX_THROTTLES];
    int xid_count;
    xid_cfg xids[MAX_XIDS];
    int ecc_count;
    ecc_cfg eccs[MAX_ECC_EVENTS];
    int grow_count;
    grow_cfg grows[MAX_GROWS]; /* sorted by at, then file order */
    int reset_count;
    gpu_event_cfg resets[MAX_RESETS];
    int lost_count;
    gpu_event_cfg losts[MAX_LOSTS];
} scenario;

/* Device handles point into these arrays. */
struct nvmlDevice_st {
    int mig;   /* 0: physical GPU, 1: MIG device */
    int index; /* into scenario.gpus or scenario.migs */
};

struct nvmlEventSet_st {
    int used;
    unsigned int generation;
    unsigned long long mask[MAX_GPUS];
    unsigned char delivered[MAX_XIDS];
    unsigned char ecc_delivered[MAX_ECC_EVENTS]; /* EVENT_SINGLE_BIT_ECC / EVENT_DOUBLE_BIT_ECC bits */
};

/* ------------------------------------------------------------------------ */
/* Global state, guarded by g_mu                                             */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv; /* CLOCK_MONOTONIC; signalled on any event-set change */
static int g_refcount;
static scenario g_sc;
static double g_scale = 1.0;
static double g_epoch_mono;        /* seconds, CLOCK_MONOTONIC */
static long long g_epoch_wall_us;  /* microseconds, CLOCK_REALTIME */
static struct nvmlDevice_st g_gpu_handles[MAX_GPUS];
static struct nvmlDevice_st g_mig_handles[MAX_MIGS];
static struct nvmlEventSet_st g_sets[MAX_EVENT_SETS];

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long long wall_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* Scenario seconds since the scenario was loaded. */
static double scen_now(void)
{
    double t = (mono_now() - g_epoch_mono) * g_scale;
    return t < 0 ? 0 : t;
}

/* Monotonic time at which the scenario clock reaches t. */
static double mono_at(double t)
{
    return g_epoch_mono + t / g_scale;
}

/* Wall-clock microseconds at which the scenario clock reaches t. */
static unsigned long long wall_us_at(double t)
{
    return (unsigned long long)(g_epoch_wall_us + llround(t / g_scale * 1e6));
}

__attribute__((constructor)) static void fake_nvml_load(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cv, &attr);
    pthread_condattr_destroy(&attr);

    for (int i = 0; i < MAX_GPUS; i++) {
        g_gpu_handles[i].mig = 0;
        g_gpu_handles[i].index = i;
    }
    for (int i = 0; i < MAX_MIGS; i++) {
        g_mig_handles[i].mig = 1;
        g_mig_handles[i].index = i;
    }

    /*
     * Pin this library in memory.  go-nvml's Shutdown dlcloses the library,
     * but calls from Go go through lazily bound PLT slots that keep pointing
     * at the first mapping; if the library were unmapped, a later Init in the
     * same process (a second receiver, a restarted pipeline in a test) would
     * jump into freed memory.  The extra reference is never released.
     */
    Dl_info info;
    if (dladdr(&g_refcount, &info) && info.dli_fname != NULL)
        (void)dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* ------------------------------------------------------------------------ */
/* Scenario parser                                                           */
/* ------------------------------------------------------------------------ */

typedef struct {
    char *key;
    char *val;
} kv_t;

#define MAX_TOKENS 80

/* The call names a gpu line's `unsupported=` list may contain. */
static const char *const k_call_names[] = {
    "GetUUID", "GetName", "GetIndex", "GetPciInfo", "GetMinorNumber", "GetMemoryInfo",
    "GetMemoryInfo_v2", "GetUtilizationRates", "GetEncoderUtilization", "GetDecoderUtilization",
    "GetTemperature", "GetTemperatureV", "GetPowerUsage", "GetEnforcedPowerLimit",
    "GetPowerManagementLimit", "GetPowerManagementDefaultLimit", "GetPowerManagementLimitConstraints",
    "GetTotalEnergyConsumption", "GetClockInfo", "GetMaxClockInfo", "GetClock", "GetPcieThroughput",
    "GetCurrentClocksEventReasons", "GetCurrentClocksThrottleReasons",
    "GetSupportedClocksEventReasons", "GetSupportedClocksThrottleReasons", "GetTotalEccErrors",
    "GetEccMode", "GetComputeRunningProcesses", "GetGraphicsRunningProcesses",
    "GetMPSComputeRunningProcesses", "GetProcessUtilization", "GetSupportedEventTypes",
    "RegisterEvents", "GetMigMode", "GetMaxMigDeviceCount", "GetMigDeviceHandleByIndex",
    "GetPersistenceMode", "GetPerformanceState", "GetPowerState", "GetFanSpeed",
    "GetCudaComputeCapability", "GpmQueryDeviceSupport",
};

static int known_call(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof k_call_names / sizeof k_call_names[0]; i++)
        if (strlen(k_call_names[i]) == len && strncmp(k_call_names[i], name, len) == 0)
            return 1;
    return 0;
}

typedef struct {
    const char *path;
    int line;
    char err[400];
} parse_ctx;

__attribute__((format(printf, 2, 3))) static int perr(parse_ctx *pc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pc->err, sizeof pc->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* Splits a line in place into a record type and key=value tokens. */
static int tokenize(parse_ctx *pc, char *s, char **kind, kv_t *kv, int *n)
{
    *kind = NULL;
    *n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (*s == '\0' || *s == '#')
            return 0;
        if (*kind == NULL) {
            char *start = s;
            while (*s && !isspace((unsigned char)*s)) {
                if (!isalnum((unsigned char)*s) && *s != '_')
                    return perr(pc, "a line must start with a record type (driver_version, gpu, mig, "
                                    "process, grow, throttle, xid, ecc, lost, reset), got \"%s\"", start);
                s++;
            }
            if (*s)
                *s++ = '\0';
            static const char *const kinds[] = {"driver_version", "gpu", "mig", "process", "grow", "throttle",
                                                "xid", "ecc", "lost", "reset"};
            int known = 0;
            for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
                known |= strcmp(start, kinds[i]) == 0;
            if (!known)
                return perr(pc, "unknown record type \"%s\" (expected driver_version, gpu, mig, process, "
                                "grow, throttle, xid, ecc, lost or reset)", start);
            *kind = start;
            continue;
        }
        if (*n >= MAX_TOKENS)
            return perr(pc, "too many tokens on one line (max %d)", MAX_TOKENS);
        char *key = s;
        while (*s && *s != '=' && !isspace((unsigned char)*s))
            s++;
        if (*s != '=' || s == key) {
            char saved = *s;
            *s = '\0';
            perr(pc, "expected key=value, got \"%s\"", key);
            *s = saved;
            return -1;
        }
        *s++ = '\0';
        char *val;
        if (*s == '"') {
            val = ++s;
            while (*s && *s != '"')
                s++;
            if (*s != '"')
                return perr(pc, "unterminated quoted value for key \"%s\"", key);
            *s++ = '\0';
            if (*s && !isspace((unsigned char)*s))
                return perr(pc, "unexpected text after the quoted value of key \"%s\"", key);
        } else {
            val = s;
            while (*s && !isspace((unsigned char)*s))
                s++;
            if (*s)
                *s++ = '\0';
        }
        for (int i = 0; i < *n; i++)
            if (strcmp(kv[i].key, key) == 0)
                return perr(pc, "key \"%s\" given twice", key);
        kv[*n].key = key;
        kv[*n].val = val;
        (*n)++;
    }
}

static int num_double(parse_ctx *pc, const kv_t *kv, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(kv->val, &end);
    if (end == kv->val || *end != '\0' || errno == ERANGE || !isfinite(v))
        return perr(pc, "%s=%s: not a number", kv->key, kv->val);
    *out = v;
    return 0;
}

static int num_i64(parse_ctx *pc, const kv_t *kv, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(kv->val, &end, 0);
    if (end == kv->val || *end != '\0' || errno == ERANGE)
        return perr(pc, "%s=%s: not an integer", kv->key, kv->val);
    if (v < lo || v > hi)
        return perr(pc, "%s=%s: out of range [%lld, %lld]", kv->key, kv->val, lo, hi);
    *out = v;
    return 0;
}

static int num_int(parse_ctx *pc, const kv_t *kv, long long lo, long long hi, int *out)
{
    long long v;
    if (num_i64(pc, kv, lo, hi, &v))
        return -1;
    *out = (int)v;
    return 0;
}

static int num_uint(parse_ctx *pc, const kv_t *kv, unsigned int *out)
{
    long long v;
    if (num_i64(pc, kv, 0, 0xFFFFFFFFLL, &v))
        return -1;
    *out = (unsigned int)v;
    return 0;
}

static int num_u64(parse_ctx *pc, const kv_t *kv, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (kv->val[0] == '-')
        return perr(pc, "%s=%s: must not be negative", kv->key, kv->val);
    unsigned long long v = strtoull(kv->val, &end, 0);
    if (end == kv->val || *end != '\0' || errno == ERANGE)
        return perr(pc, "%s=%s: not an unsigned integer", kv->key, kv->val);
    *out = v;
    return 0;
}

/* A byte count: a number with an optional KB/MB/GB/TB or KiB/MiB/GiB/TiB suffix. */
static int num_bytes(parse_ctx *pc, const kv_t *kv, int allow_negative, double *out)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    };
    char *end;
    errno = 0;
    double v = strtod(kv->val, &end);
    if (end == kv->val || errno == ERANGE || !isfinite(v))
        return perr(pc, "%s=%s: not a byte count", kv->key, kv->val);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            v *= units[i].mult;
            if (v < 0 && !allow_negative)
                return perr(pc, "%s=%s: must not be negative", kv->key, kv->val);
            *out = v;
            return 0;
        }
    }
    return perr(pc, "%s=%s: unknown unit \"%s\" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", kv->key,
                kv->val, end);
}

static int str_val(parse_ctx *pc, const kv_t *kv, char *dst, size_t size)
{
    if (strlen(kv->val) >= size)
        return perr(pc, "%s: value longer than %zu characters", kv->key, size - 1);
    strcpy(dst, kv->val);
    return 0;
}

static int time_val(parse_ctx *pc, const kv_t *kv, int allow_forever, double *out)
{
    if (num_double(pc, kv, out))
        return -1;
    if (*out < 0 && !(allow_forever && *out == -1))
        return perr(pc, "%s=%s: must be >= 0%s", kv->key, kv->val, allow_forever ? " (or -1 for never)" : "");
    return 0;
}

static int pci_parse(const char *s, unsigned int *dom, unsigned int *bus, unsigned int *dev)
{
    unsigned int d, b, v, f;
    char tail;
    if (sscanf(s, "%x:%x:%x.%x%c", &d, &b, &v, &f, &tail) == 4) {
        *dom = d;
    } else if (sscanf(s, "%x:%x.%x%c", &b, &v, &f, &tail) == 3) {
        *dom = 0;
    } else {
        return -1;
    }
    if (b > 0xFF || v > 0x1F || f > 7)
        return -1;
    *bus = b;
    *dev = v;
    return 0;
}

static int find_key(const kv_t *kv, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return i;
    return -1;
}

static int need(parse_ctx *pc, const kv_t *kv, int n, const char *kind, const char *key)
{
    if (find_key(kv, n, key) < 0)
        return perr(pc, "%s: missing required key \"%s\"", kind, key);
    return 0;
}

static int unknown_key(parse_ctx *pc, const char *kind, const kv_t *kv)
{
    return perr(pc, "unknown key \"%s\" for record \"%s\"", kv->key, kind);
}

static int gpu_ref(parse_ctx *pc, const kv_t *kv, int *out)
{
    return num_int(pc, kv, 0, MAX_GPUS - 1, out);
}

static void gpu_defaults(gpu_cfg *g)
{
    memset(g, 0, sizeof *g);
    strcpy(g->name, "NVIDIA A100-SXM4-80GB");
    g->pci_bus = 0xFFFFFFFFu; /* derived from the index unless given */
    g->pci_device_id = 0x20B210DEu;
    g->pci_subsystem_id = 0x147F10DEu;
    g->memory_total = 85899345920.0;
    g->memory_reserved = 503316480.0;
    g->util_period = 60;
    g->temp = 40;
    g->temp_max = -1;
    g->power_w = 60;
    g->power_limit_w = 400;
    g->energy_offset_mj = 1e9;
    g->sm_clock = 1410;
    g->mem_clock = 1593;
    g->video_clock = 1275;
    g->ecc = 1;
    g->persistence = 1;
    g->fan = -1;
    g->minor = -1;
    g->mig = -1;
    g->max_mig_devices = 7;
    g->cc_major = 8;
}

static int parse_gpu(parse_ctx *pc, scenario *sc, kv_t *kv, int n)
{
    gpu_cfg g;
    gpu_defaults(&g);
    int index = -1, have_graphics = 0, have_max_graphics = 0;
    int have_ecc_c_agg = 0, have_ecc_u_agg = 0;
    if (need(pc, kv, n, "gpu", "index"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "index")) r = num_int(pc, &kv[i], 0, MAX_GPUS - 1, &index);
        else if (!strcmp(k, "uuid")) r = str_val(pc, &kv[i], g.uuid, sizeof g.uuid);
        else if (!strcmp(k, "name")) r = str_val(pc, &kv[i], g.name, sizeof g.name);
        else if (!strcmp(k, "pci_bus_id")) {
            r = pci_parse(kv[i].val, &g.pci_domain, &g.pci_bus, &g.pci_device);
            if (r)
                r = perr(pc, "pci_bus_id=%s: expected DDDDDDDD:BB:DD.F", kv[i].val);
        }
        else if (!strcmp(k, "pci_device_id")) r = num_uint(pc, &kv[i], &g.pci_device_id);
        else if (!strcmp(k, "pci_subsystem_id")) r = num_uint(pc, &kv[i], &g.pci_subsystem_id);
        else if (!strcmp(k, "memory_total")) r = num_bytes(pc, &kv[i], 0, &g.memory_total);
        else if (!strcmp(k, "memory_reserved")) r = num_bytes(pc, &kv[i], 0, &g.memory_reserved);
        else if (!strcmp(k, "memory_used")) r = num_bytes(pc, &kv[i], 0, &g.memory_used);
        else if (!strcmp(k, "util")) r = num_double(pc, &kv[i], &g.util);
        else if (!strcmp(k, "util_amplitude")) r = num_double(pc, &kv[i], &g.util_amplitude);
        else if (!strcmp(k, "util_period")) r = num_double(pc, &kv[i], &g.util_period);
        else if (!strcmp(k, "mem_util")) r = num_double(pc, &kv[i], &g.mem_util);
        else if (!strcmp(k, "enc_util")) r = num_double(pc, &kv[i], &g.enc_util);
        else if (!strcmp(k, "dec_util")) r = num_double(pc, &kv[i], &g.dec_util);
        else if (!strcmp(k, "temp")) r = num_double(pc, &kv[i], &g.temp);
        else if (!strcmp(k, "temp_slope")) r = num_double(pc, &kv[i], &g.temp_slope);
        else if (!strcmp(k, "temp_max")) r = num_double(pc, &kv[i], &g.temp_max);
        else if (!strcmp(k, "power_w")) r = num_double(pc, &kv[i], &g.power_w);
        else if (!strcmp(k, "power_limit_w")) r = num_double(pc, &kv[i], &g.power_limit_w);
        else if (!strcmp(k, "energy_offset_mj")) r = num_double(pc, &kv[i], &g.energy_offset_mj);
        else if (!strcmp(k, "sm_clock")) r = num_uint(pc, &kv[i], &g.sm_clock);
        else if (!strcmp(k, "mem_clock")) r = num_uint(pc, &kv[i], &g.mem_clock);
        else if (!strcmp(k, "graphics_clock")) { r = num_uint(pc, &kv[i], &g.graphics_clock); have_graphics = 1; }
        else if (!strcmp(k, "video_clock")) r = num_uint(pc, &kv[i], &g.video_clock);
        else if (!strcmp(k, "max_sm_clock")) r = num_uint(pc, &kv[i], &g.max_sm_clock);
        else if (!strcmp(k, "max_mem_clock")) r = num_uint(pc, &kv[i], &g.max_mem_clock);
        else if (!strcmp(k, "max_graphics_clock")) { r = num_uint(pc, &kv[i], &g.max_graphics_clock); have_max_graphics = 1; }
        else if (!strcmp(k, "max_video_clock")) r = num_uint(pc, &kv[i], &g.max_video_clock);
        else if (!strcmp(k, "pcie_tx_kbps")) r = num_uint(pc, &kv[i], &g.pcie_tx_kbps);
        else if (!strcmp(k, "pcie_rx_kbps")) r = num_uint(pc, &kv[i], &g.pcie_rx_kbps);
        else if (!strcmp(k, "ecc")) r = num_int(pc, &kv[i], -1, 1, &g.ecc);
        else if (!strcmp(k, "ecc_corrected")) r = num_u64(pc, &kv[i], &g.ecc_corrected);
        else if (!strcmp(k, "ecc_uncorrected")) r = num_u64(pc, &kv[i], &g.ecc_uncorrected);
        else if (!strcmp(k, "ecc_corrected_aggregate")) { r = num_u64(pc, &kv[i], &g.ecc_corrected_aggregate); have_ecc_c_agg = 1; }
        else if (!strcmp(k, "ecc_uncorrected_aggregate")) { r = num_u64(pc, &kv[i], &g.ecc_uncorrected_aggregate); have_ecc_u_agg = 1; }
        else if (!strcmp(k, "persistence")) r = num_int(pc, &kv[i], -1, 1, &g.persistence);
        else if (!strcmp(k, "pstate")) r = num_int(pc, &kv[i], -1, 15, &g.pstate);
        else if (!strcmp(k, "fan")) r = num_int(pc, &kv[i], -1, 100, &g.fan);
        else if (!strcmp(k, "minor")) r = num_int(pc, &kv[i], 0, 255, &g.minor);
        else if (!strcmp(k, "mig")) r = num_int(pc, &kv[i], -1, 1, &g.mig);
        else if (!strcmp(k, "max_mig_devices")) r = num_int(pc, &kv[i], 0, MAX_MIGS, &g.max_mig_devices);
        else if (!strcmp(k, "compute_capability")) {
            char tail;
            r = 0;
            if (sscanf(kv[i].val, "%d.%d%c", &g.cc_major, &g.cc_minor, &tail) != 2)
                r = perr(pc, "compute_capability=%s: expected MAJOR.MINOR", kv[i].val);
        }
        else if (!strcmp(k, "unsupported")) {
            /* Comma-separated call names; validated so typos do not go unnoticed. */
            size_t len = strlen(kv[i].val);
            r = 0;
            if (len + 3 > sizeof g.unsupported) {
                r = perr(pc, "unsupported: list too long");
            } else {
                const char *p = kv[i].val;
                while (*p && r == 0) {
                    const char *comma = strchr(p, ',');
                    size_t l = comma ? (size_t)(comma - p) : strlen(p);
                    if (!known_call(p, l))
                        r = perr(pc, "unsupported: unknown call name \"%.*s\"", (int)l, p);
                    p += l;
                    if (*p == ',')
                        p++;
                }
                snprintf(g.unsupported, sizeof g.unsupported, ",%s,", kv[i].val);
            }
        }
        else r = unknown_key(pc, "gpu", &kv[i]);
        if (r)
            return -1;
    }
    if (sc->gpus[index].defined)
        return perr(pc, "gpu index=%d already defined at line %d", index, sc->gpus[index].line);
    if (g.memory_reserved > g.memory_total)
        return perr(pc, "memory_reserved exceeds memory_total");
    if (g.util_period < 0)
        return perr(pc, "util_period must be >= 0");
    if (g.uuid[0] == '\0')
        snprintf(g.uuid, sizeof g.uuid, "GPU-fa4e5ca1-0000-4000-8000-%012x", (unsigned int)index);
    if (g.pci_bus == 0xFFFFFFFFu) {
        g.pci_domain = 0;
        g.pci_bus = 0x07 + 8u * (unsigned int)index;
        g.pci_device = 0;
    }
    if (!have_graphics)
        g.graphics_clock = g.sm_clock;
    if (g.max_sm_clock == 0)
        g.max_sm_clock = g.sm_clock;
    if (g.max_mem_clock == 0)
        g.max_mem_clock = g.mem_clock;
    if (!have_max_graphics)
        g.max_graphics_clock = g.max_sm_clock > g.graphics_clock ? g.max_sm_clock : g.graphics_clock;
    if (g.max_video_clock == 0)
        g.max_video_clock = g.video_clock;
    if (!have_ecc_c_agg)
        g.ecc_corrected_aggregate = g.ecc_corrected;
    if (!have_ecc_u_agg)
        g.ecc_uncorrected_aggregate = g.ecc_uncorrected;
    if (g.minor < 0)
        g.minor = index;
    g.defined = 1;
    g.line = pc->line;
    sc->gpus[index] = g;
    if (index + 1 > sc->gpu_count)
        sc->gpu_count = index + 1;
    return 0;
}

static int parse_mig(parse_ctx *pc, scenario *sc, kv_t *kv, int n)
{
    if (sc->mig_count >= MAX_MIGS)
        return perr(pc, "too many mig records (max %d)", MAX_MIGS);
    mig_cfg m;
    memset(&m, 0, sizeof m);
    m.memory_total = 10737418240.0; /* 10 GiB */
    m.gpu_instance = INVALID_INSTANCE_ID;
    if (need(pc, kv, n, "mig", "gpu") || need(pc, kv, n, "mig", "index"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "gpu")) r = gpu_ref(pc, &kv[i], &m.gpu);
        else if (!strcmp(k, "index")) r = num_int(pc, &kv[i], 0, MAX_MIGS - 1, &m.index);
        else if (!strcmp(k, "uuid")) r = str_val(pc, &kv[i], m.uuid, sizeof m.uuid);
        else if (!strcmp(k, "name")) r = str_val(pc, &kv[i], m.name, sizeof m.name);
        else if (!strcmp(k, "gpu_instance")) r = num_uint(pc, &kv[i], &m.gpu_instance);
        else if (!strcmp(k, "compute_instance")) r = num_uint(pc, &kv[i], &m.compute_instance);
        else if (!strcmp(k, "memory_total")) r = num_bytes(pc, &kv[i], 0, &m.memory_total);
        else if (!strcmp(k, "memory_reserved")) r = num_bytes(pc, &kv[i], 0, &m.memory_reserved);
        else if (!strcmp(k, "memory_used")) r = num_bytes(pc, &kv[i], 0, &m.memory_used);
        else r = unknown_key(pc, "mig", &kv[i]);
        if (r)
            return -1;
    }
    if (m.gpu_instance == INVALID_INSTANCE_ID)
        m.gpu_instance = (unsigned int)m.index + 1;
    if (m.memory_reserved > m.memory_total)
        return perr(pc, "memory_reserved exceeds memory_total");
    m.line = pc->line;
    sc->migs[sc->mig_count++] = m;
    return 0;
}

static int parse_process(parse_ctx *pc, scenario *sc, kv_t *kv, int n)
{
    if (sc->proc_count >= MAX_PROCS)
        return perr(pc, "too many process records (max %d)", MAX_PROCS);
    proc_cfg p;
    memset(&p, 0, sizeof p);
    p.stop = -1;
    p.gpu_instance = INVALID_INSTANCE_ID;
    p.compute_instance = INVALID_INSTANCE_ID;
    if (need(pc, kv, n, "process", "gpu") || need(pc, kv, n, "process", "pid"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "gpu")) r = gpu_ref(pc, &kv[i], &p.gpu);
        else if (!strcmp(k, "pid")) r = num_uint(pc, &kv[i], &p.pid);
        else if (!strcmp(k, "memory")) r = num_bytes(pc, &kv[i], 0, &p.memory);
        else if (!strcmp(k, "growth")) r = num_bytes(pc, &kv[i], 1, &p.growth);
        else if (!strcmp(k, "start")) r = time_val(pc, &kv[i], 0, &p.start);
        else if (!strcmp(k, "stop")) r = time_val(pc, &kv[i], 1, &p.stop);
        else if (!strcmp(k, "sm_util")) r = num_uint(pc, &kv[i], &p.sm_util);
        else if (!strcmp(k, "mem_util")) r = num_uint(pc, &kv[i], &p.mem_util);
        else if (!strcmp(k, "enc_util")) r = num_uint(pc, &kv[i], &p.enc_util);
        else if (!strcmp(k, "dec_util")) r = num_uint(pc, &kv[i], &p.dec_util);
        else if (!strcmp(k, "gpu_instance")) r = num_uint(pc, &kv[i], &p.gpu_instance);
        else if (!strcmp(k, "compute_instance")) r = num_uint(pc, &kv[i], &p.compute_instance);
        else if (!strcmp(k, "name")) r = str_val(pc, &kv[i], p.name, sizeof p.name);
        else if (!strcmp(k, "type")) {
            r = 0;
            if (!strcmp(kv[i].val, "compute")) p.graphics = 0;
            else if (!strcmp(kv[i].val, "graphics")) p.graphics = 1;
            else r = perr(pc, "type=%s: expected compute or graphics", kv[i].val);
        }
        else r = unknown_key(pc, "process", &kv[i]);
        if (r)
            return -1;
    }
    if (p.stop >= 0 && p.stop < p.start)
        return perr(pc, "stop is before start");
    p.line = pc->line;
    sc->procs[sc->proc_count++] = p;
    return 0;
}

static int parse_throttle(parse_ctx *pc, scenario *sc, kv_t *kv, int n)
{
    if (sc->throttle_count >= MAX_THROTTLES)
        return perr(pc, "too many throttle records (max %d)", MAX_THROTTLES);
    throttle_cfg t;
    memset(&t, 0, sizeof t);
    t.until = -1;
    if (need(pc, kv, n, "throttle", "gpu") || need(pc, kv, n, "throttle", "reasons"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "gpu")) r = gpu_ref(pc, &kv[i], &t.gpu);
        else if (!strcmp(k, "at")) r = time_val(pc, &kv[i], 0, &t.at);
        else if (!strcmp(k, "until")) r = time_val(pc, &kv[i], 1, &t.until);
        else if (!strcmp(k, "reasons")) r = num_u64(pc, &kv[i], &t.reasons);
        else if (!strcmp(k, "sm_clock")) r = num_uint(pc, &kv[i], &t.sm_clock);
        else r = unknown_key(pc, "throttle", &kv[i]);
        if (r)
            return -1;
    }
    if (t.until >= 0 && t.until < t.at)
        return perr(pc, "until is before at");
    t.line = pc->line;
    sc->throttles[sc->throttle_count++] = t;
    return 0;
}

static int parse_xid(parse_ctx *pc, scenario *sc, kv_t *kv, int n)
{
    if (sc->xid_count >= MAX_XIDS)
        return perr(pc, "too many xid records (max %d)", MAX_XIDS);
    xid_cfg x;
    memset(&x, 0, sizeof x);
    if (need(pc, kv, n, "xid", "gpu") || need(pc, kv, n, "xid", "at") || need(pc, kv, n, "xid", "code"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "gpu")) r = gpu_ref(pc, &kv[i], &x.gpu);
        else if (!strcmp(k, "at")) r = time_val(pc, &kv[i], 0, &x.at);
        else if (!strcmp(k, "code")) r = num_u64(pc, &kv[i], &x.code);
        else r = unknown_key(pc, "xid", &kv[i]);
        if (r)
            return -1;
    }
    x.line = pc->line;
    sc->xids[sc->xid_count++] = x;
    return 0;
}

static int parse_ecc(parse_ctx *pc, scenario *sc, kv_t *kv, int n)
{
    if (sc->ecc_count >= MAX_ECC_EVENTS)
        return perr(pc, "too many ecc records (max %d)", MAX_ECC_EVENTS);
    ecc_cfg e;
    memset(&e, 0, sizeof e);
    if (need(pc, kv, n, "ecc", "gpu") || need(pc, kv, n, "ecc", "at"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "gpu")) r = gpu_ref(pc, &kv[i], &e.gpu);
        else if (!strcmp(k, "at")) r = time_val(pc, &kv[i], 0, &e.at);
        else if (!strcmp(k, "corrected")) r = num_u64(pc, &kv[i], &e.corrected);
        else if (!strcmp(k, "uncorrected")) r = num_u64(pc, &kv[i], &e.uncorrected);
        else r = unknown_key(pc, "ecc", &kv[i]);
        if (r)
            return -1;
    }
    if (e.corrected == 0 && e.uncorrected == 0)
        return perr(pc, "ecc: needs corrected=N or uncorrected=N with N > 0");
    e.line = pc->line;
    sc->eccs[sc->ecc_count++] = e;
    return 0;
}

/* `lost` and `reset` lines: a GPU and a time. Which GPUs exist is checked
   once every line is read. */
static int parse_gpu_event(parse_ctx *pc, const char *kind, kv_t *kv, int n, gpu_event_cfg *list, int *count,
                           int max)
{
    if (*count >= max)
        return perr(pc, "too many %s records (max %d)", kind, max);
    gpu_event_cfg e;
    memset(&e, 0, sizeof e);
    if (need(pc, kv, n, kind, "gpu") || need(pc, kv, n, kind, "at"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "gpu")) r = gpu_ref(pc, &kv[i], &e.gpu);
        else if (!strcmp(k, "at")) r = time_val(pc, &kv[i], 0, &e.at);
        else r = unknown_key(pc, kind, &kv[i]);
        if (r)
            return -1;
    }
    e.line = pc->line;
    list[(*count)++] = e;
    return 0;
}

static int parse_grow(parse_ctx *pc, scenario *sc, kv_t *kv, int n)
{
    if (sc->grow_count >= MAX_GROWS)
        return perr(pc, "too many grow records (max %d)", MAX_GROWS);
    grow_cfg g;
    memset(&g, 0, sizeof g);
    g.gpu = -1;
    if (need(pc, kv, n, "grow", "pid") || need(pc, kv, n, "grow", "at") || need(pc, kv, n, "grow", "rate"))
        return -1;
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "gpu")) r = gpu_ref(pc, &kv[i], &g.gpu);
        else if (!strcmp(k, "pid")) r = num_uint(pc, &kv[i], &g.pid);
        else if (!strcmp(k, "at")) r = time_val(pc, &kv[i], 0, &g.at);
        else if (!strcmp(k, "rate")) r = num_bytes(pc, &kv[i], 1, &g.rate);
        else r = unknown_key(pc, "grow", &kv[i]);
        if (r)
            return -1;
    }
    g.line = pc->line;
    sc->grows[sc->grow_count++] = g;
    return 0;
}

static int parse_driver(parse_ctx *pc, scenario *sc, kv_t *kv, int n, int *have_nvml)
{
    for (int i = 0; i < n; i++) {
        const char *k = kv[i].key;
        int r;
        if (!strcmp(k, "version")) r = str_val(pc, &kv[i], sc->driver_version, 64);
        else if (!strcmp(k, "nvml")) { r = str_val(pc, &kv[i], sc->nvml_version, sizeof sc->nvml_version); *have_nvml = 1; }
        else if (!strcmp(k, "cuda")) r = num_int(pc, &kv[i], 0, 1000000, &sc->cuda_version);
        else r = unknown_key(pc, "driver_version", &kv[i]);
        if (r)
            return -1;
    }
    return 0;
}

/* Cross-record checks, run once every line has been read. */
static int validate(parse_ctx *pc, scenario *sc)
{
    for (int i = 0; i < sc->gpu_count; i++)
        if (!sc->gpus[i].defined)
            return perr(pc, "gpu index=%d is missing: gpu indices must run 0..%d without gaps", i,
                        sc->gpu_count - 1);
#define CHECK_GPU(rec, what)                                                                        \
    do {                                                                                            \
        if ((rec).gpu >= sc->gpu_count) {                                                           \
            pc->line = (rec).line;                                                                  \
            return perr(pc, what " refers to gpu=%d, which no gpu line defines", (rec).gpu);        \
        }                                                                                           \
    } while (0)
    for (int i = 0; i < sc->proc_count; i++)
        CHECK_GPU(sc->procs[i], "process");
    for (int i = 0; i < sc->throttle_count; i++)
        CHECK_GPU(sc->throttles[i], "throttle");
    for (int i = 0; i < sc->xid_count; i++)
        CHECK_GPU(sc->xids[i], "xid");
    for (int i = 0; i < sc->reset_count; i++)
        CHECK_GPU(sc->resets[i], "reset");
    for (int i = 0; i < sc->lost_count; i++)
        CHECK_GPU(sc->losts[i], "lost");
    for (int i = 0; i < sc->grow_count; i++) {
        const grow_cfg *g = &sc->grows[i];
        if (g->gpu >= 0)
            CHECK_GPU(*g, "grow");
        int found = 0;
        for (int j = 0; j < sc->proc_count && !found; j++)
            found = sc->procs[j].pid == g->pid && (g->gpu < 0 || sc->procs[j].gpu == g->gpu);
        if (!found) {
            pc->line = g->line;
            if (g->gpu >= 0)
                return perr(pc, "grow refers to pid=%u on gpu=%d, which no process line defines", g->pid, g->gpu);
            return perr(pc, "grow refers to pid=%u, which no process line defines", g->pid);
        }
    }
    /* Rates apply in time order, file order on a tie (insertion sort:
       stable, and the list is short). */
    for (int i = 1; i < sc->grow_count; i++) {
        grow_cfg g = sc->grows[i];
        int j = i - 1;
        for (; j >= 0 && sc->grows[j].at > g.at; j--)
            sc->grows[j + 1] = sc->grows[j];
        sc->grows[j + 1] = g;
    }
    for (int i = 0; i < sc->ecc_count; i++) {
        CHECK_GPU(sc->eccs[i], "ecc");
        if (sc->gpus[sc->eccs[i].gpu].ecc != 1) {
            pc->line = sc->eccs[i].line;
            return perr(pc, "ecc record for gpu=%d, whose gpu line sets ecc=%d: only a GPU with ECC enabled "
                            "counts ECC errors", sc->eccs[i].gpu, sc->gpus[sc->eccs[i].gpu].ecc);
        }
    }
    for (int i = 0; i < sc->mig_count; i++) {
        mig_cfg *m = &sc->migs[i];
        CHECK_GPU(*m, "mig");
        gpu_cfg *g = &sc->gpus[m->gpu];
        pc->line = m->line;
        if (g->mig != 1)
            return perr(pc, "mig device on gpu=%d, whose gpu line does not set mig=1", m->gpu);
        if (m->index >= g->max_mig_devices)
            return perr(pc, "mig index=%d is not below the gpu's max_mig_devices=%d", m->index,
                        g->max_mig_devices);
        for (int j = 0; j < i; j++)
            if (sc->migs[j].gpu == m->gpu && sc->migs[j].index == m->index)
                return perr(pc, "mig gpu=%d index=%d already defined at line %d", m->gpu, m->index,
                            sc->migs[j].line);
        if (m->uuid[0] == '\0')
            snprintf(m->uuid, sizeof m->uuid, "MIG-fa4e5ca1-%04x-4000-8000-%012x", (unsigned int)m->gpu,
                     (unsigned int)m->index);
        if (m->name[0] == '\0')
            snprintf(m->name, sizeof m->name, "%.80s MIG", g->name);
    }
#undef CHECK_GPU
    return 0;
}

static int parse_file(const char *path, scenario *sc, char *err, size_t errlen)
{
    parse_ctx pc;
    memset(&pc, 0, sizeof pc);
    pc.path = path;
    memset(sc, 0, sizeof *sc);
    strcpy(sc->driver_version, "550.54.15");
    sc->cuda_version = 12040;
    int have_nvml = 0;

    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read scenario %s (FAKE_NVML_SCENARIO): %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        pc.line++;
        char *kind;
        kv_t kv[MAX_TOKENS];
        int n;
        if (tokenize(&pc, line, &kind, kv, &n)) {
            rc = -1;
            break;
        }
        if (kind == NULL)
            continue;
        if (!strcmp(kind, "driver_version")) rc = parse_driver(&pc, sc, kv, n, &have_nvml);
        else if (!strcmp(kind, "gpu")) rc = parse_gpu(&pc, sc, kv, n);
        else if (!strcmp(kind, "mig")) rc = parse_mig(&pc, sc, kv, n);
        else if (!strcmp(kind, "process")) rc = parse_process(&pc, sc, kv, n);
        else if (!strcmp(kind, "grow")) rc = parse_grow(&pc, sc, kv, n);
        else if (!strcmp(kind, "throttle")) rc = parse_throttle(&pc, sc, kv, n);
        else if (!strcmp(kind, "xid")) rc = parse_xid(&pc, sc, kv, n);
        else if (!strcmp(kind, "ecc")) rc = parse_ecc(&pc, sc, kv, n);
        else if (!strcmp(kind, "lost")) rc = parse_gpu_event(&pc, "lost", kv, n, sc->losts, &sc->lost_count, MAX_LOSTS);
        else if (!strcmp(kind, "reset"))
            rc = parse_gpu_event(&pc, "reset", kv, n, sc->resets, &sc->reset_count, MAX_RESETS);
        else rc = perr(&pc, "unknown record type \"%s\"", kind); /* unreachable: tokenize checks */
        if (rc)
            break;
    }
    if (rc == 0 && ferror(f))
        rc = perr(&pc, "read error: %s", strerror(errno));
    free(line);
    fclose(f);
    if (rc == 0) {
        pc.line = 0; /* validate() sets it for errors tied to one record */
        rc = validate(&pc, sc);
    }
    if (rc) {
        if (pc.line > 0)
            snprintf(err, errlen, "%s:%d: %s", path, pc.line, pc.err);
        else
            snprintf(err, errlen, "%s: %s", path, pc.err);
        return -1;
    }
    if (!have_nvml)
        snprintf(sc->nvml_version, sizeof sc->nvml_version, "12.%s", sc->driver_version);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Scenario evaluation (callers hold g_mu)                                   */
/* ------------------------------------------------------------------------ */

static int proc_present(const proc_cfg *p, double t)
{
    return t >= p->start && (p->stop < 0 || t < p->stop);
}

/* The memory of a process at t: the integral of its growth, which `grow`
   records change from their `at` on (from its start, for a `grow` before
   it), floored at 0. */
static double proc_memory(const proc_cfg *p, double t)
{
    double m = p->memory, rate = p->growth, from = p->start;
    for (int i = 0; i < g_sc.grow_count; i++) {
        const grow_cfg *g = &g_sc.grows[i];
        if (g->pid != p->pid || (g->gpu >= 0 && g->gpu != p->gpu) || g->at > t)
            continue;
        double at = g->at > p->start ? g->at : p->start;
        if (at > from) {
            m += rate * (at - from);
            from = at;
        }
        rate = g->rate;
    }
    if (t > from)
        m += rate * (t - from);
    return m < 0 ? 0 : m;
}

/* The newest reset of GPU gi at or before t (< 0: none). */
static double last_reset(int gi, double t)
{
    double at = -1;
    for (int i = 0; i < g_sc.reset_count; i++)
        if (g_sc.resets[i].gpu == gi && g_sc.resets[i].at <= t && g_sc.resets[i].at > at)
            at = g_sc.resets[i].at;
    return at;
}

static unsigned int pct(double v)
{
    if (v < 0)
        v = 0;
    if (v > 100)
        v = 100;
    return (unsigned int)lround(v);
}

/* A GPU is lost from a `lost` record's time until a later reset. */
static int gpu_lost(const gpu_cfg *g, double t)
{
    int gi = (int)(g - g_sc.gpus);
    double lost = -1;
    for (int i = 0; i < g_sc.lost_count; i++)
        if (g_sc.losts[i].gpu == gi && g_sc.losts[i].at <= t && g_sc.losts[i].at > lost)
            lost = g_sc.losts[i].at;
    return lost >= 0 && lost > last_reset(gi, t);
}

/* Device memory in use at t, capped at what is not reserved. */
static double gpu_used(int gi, double t)
{
    const gpu_cfg *g = &g_sc.gpus[gi];
    double used = g->memory_used;
    for (int i = 0; i < g_sc.proc_count; i++) {
        const proc_cfg *p = &g_sc.procs[i];
        if (p->gpu == gi && proc_present(p, t))
            used += proc_memory(p, t);
    }
    double cap = g->memory_total - g->memory_reserved;
    return used > cap ? cap : used;
}

static double mig_used(const mig_cfg *m, double t)
{
    double used = m->memory_used;
    for (int i = 0; i < g_sc.proc_count; i++) {
        const proc_cfg *p = &g_sc.procs[i];
        if (p->gpu == m->gpu && p->gpu_instance == m->gpu_instance && proc_present(p, t))
            used += proc_memory(p, t);
    }
    double cap = m->memory_total - m->memory_reserved;
    return used > cap ? cap : used;
}

static unsigned long long active_reasons(int gi, double t, unsigned int *sm_clock_override)
{
    unsigned long long r = 0;
    *sm_clock_override = 0;
    for (int i = 0; i < g_sc.throttle_count; i++) {
        const throttle_cfg *th = &g_sc.throttles[i];
        if (th->gpu != gi || t < th->at || (th->until >= 0 && t >= th->until))
            continue;
        r |= th->reasons;
        if (th->sm_clock && (*sm_clock_override == 0 || th->sm_clock < *sm_clock_override))
            *sm_clock_override = th->sm_clock;
    }
    return r;
}

/* ------------------------------------------------------------------------ */
/* Entry helpers                                                             */
/* ------------------------------------------------------------------------ */

static nvmlReturn_t leave(nvmlReturn_t rc)
{
    pthread_mutex_unlock(&g_mu);
    return rc;
}

/* Locks g_mu and checks the library is initialised.  On failure the lock is
 * already released. */
static nvmlReturn_t enter(void)
{
    pthread_mutex_lock(&g_mu);
    if (g_refcount == 0)
        return leave(NVML_ERROR_UNINITIALIZED);
    return NVML_SUCCESS;
}

typedef struct {
    gpu_cfg *gpu;  /* the physical GPU (the parent, for a MIG device) */
    int gpu_index;
    mig_cfg *mig;  /* NULL for a physical GPU */
    double t;
} dev_ctx;

static int handle_index(const struct nvmlDevice_st *h, const struct nvmlDevice_st *base, int count)
{
    uintptr_t p = (uintptr_t)h, b = (uintptr_t)base;
    if (p < b || p >= b + (uintptr_t)count * sizeof *base || (p - b) % sizeof *base != 0)
        return -1;
    return (int)((p - b) / sizeof *base);
}

/*
 * Locks g_mu and resolves a device handle.  `call` is the Go method name used
 * by a gpu line's unsupported= list; allow_mig says whether the call is
 * answered for MIG device handles (otherwise they get NOT_SUPPORTED).  On
 * failure the lock is already released.
 */
static nvmlReturn_t enter_dev(nvmlDevice_t device, const char *call, int allow_mig, dev_ctx *c)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    memset(c, 0, sizeof *c);
    int i = handle_index(device.handle, g_gpu_handles, g_sc.gpu_count);
    if (i >= 0) {
        c->gpu_index = i;
    } else {
        i = handle_index(device.handle, g_mig_handles, g_sc.mig_count);
        if (i < 0)
            return leave(NVML_ERROR_INVALID_ARGUMENT);
        c->mig = &g_sc.migs[i];
        c->gpu_index = c->mig->gpu;
    }
    c->gpu = &g_sc.gpus[c->gpu_index];
    c->t = scen_now();
    if (gpu_lost(c->gpu, c->t))
        return leave(NVML_ERROR_GPU_IS_LOST);
    if (c->mig != NULL && !allow_mig)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    if (call != NULL && c->gpu->unsupported[0] != '\0') {
        char needle[80];
        snprintf(needle, sizeof needle, ",%s,", call);
        if (strstr(c->gpu->unsupported, needle) != NULL)
            return leave(NVML_ERROR_NOT_SUPPORTED);
    }
    return NVML_SUCCESS;
}

static nvmlDevice_t gpu_handle(int i)
{
    nvmlDevice_t d = {&g_gpu_handles[i]};
    return d;
}

static nvmlReturn_t copy_str(char *dst, unsigned int length, const char *src)
{
    if (dst == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    size_t n = strlen(src);
    if (n + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, n + 1);
    return NVML_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Init / shutdown / errors                                                  */
/* ------------------------------------------------------------------------ */

static nvmlReturn_t do_init(void)
{
    pthread_mutex_lock(&g_mu);
    if (g_refcount > 0) {
        g_refcount++;
        return leave(NVML_SUCCESS);
    }
    const char *path = getenv("FAKE_NVML_SCENARIO");
    if (path == NULL || path[0] == '\0') {
        fprintf(stderr, "fakenvml: FAKE_NVML_SCENARIO is not set; it must name a scenario file\n");
        return leave(NVML_ERROR_UNKNOWN);
    }
    double scale = 1.0;
    const char *s = getenv("FAKE_NVML_TIME_SCALE");
    if (s != NULL && s[0] != '\0') {
        char *end;
        errno = 0;
        scale = strtod(s, &end);
        if (end == s || *end != '\0' || errno == ERANGE || !isfinite(scale) || scale <= 0) {
            fprintf(stderr, "fakenvml: FAKE_NVML_TIME_SCALE=%s: must be a number > 0\n", s);
            return leave(NVML_ERROR_UNKNOWN);
        }
    }
    scenario *sc = malloc(sizeof *sc);
    if (sc == NULL) {
        fprintf(stderr, "fakenvml: out of memory\n");
        return leave(NVML_ERROR_MEMORY);
    }
    char err[600];
    if (parse_file(path, sc, err, sizeof err) != 0) {
        fprintf(stderr, "fakenvml: %s\n", err);
        free(sc);
        return leave(NVML_ERROR_UNKNOWN);
    }
    g_sc = *sc;
    free(sc);
    for (int i = 0; i < MAX_EVENT_SETS; i++) {
        g_sets[i].used = 0;
        g_sets[i].generation++;
    }
    g_scale = scale;
    g_epoch_mono = mono_now();
    g_epoch_wall_us = wall_now_us();
    g_refcount = 1;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlInit_v2(void) { return do_init(); }
API nvmlReturn_t nvmlInit(void) { return do_init(); }

API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    return do_init();
}

API nvmlReturn_t nvmlShutdown(void)
{
    pthread_mutex_lock(&g_mu);
    if (g_refcount == 0)
        return leave(NVML_ERROR_UNINITIALIZED);
    if (--g_refcount == 0) {
        for (int i = 0; i < MAX_EVENT_SETS; i++) {
            g_sets[i].used = 0;
            g_sets[i].generation++;
        }
        pthread_cond_broadcast(&g_cv);
    }
    return leave(NVML_SUCCESS);
}

API const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "GPU access blocked by the operating system";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "vGPU operation not supported while ECC is enabled";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient Resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Frequency Not Supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument Version Mismatch";
    case NVML_ERROR_DEPRECATED: return "Deprecated";
    case NVML_ERROR_NOT_READY: return "Not Ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU Not Found";
    case NVML_ERROR_INVALID_STATE: return "Invalid State";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: return "Reset Type Not Supported";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    }
    return "Unknown Error";
}

/* ------------------------------------------------------------------------ */
/* System queries                                                            */
/* ------------------------------------------------------------------------ */

API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    return leave(copy_str(version, length, g_sc.driver_version));
}

API nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    return leave(copy_str(version, length, g_sc.nvml_version));
}

static nvmlReturn_t cuda_version(int *v)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    if (v == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *v = g_sc.cuda_version;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return cuda_version(v); }
API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return cuda_version(v); }

API nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    for (int i = 0; i < g_sc.proc_count; i++)
        if (g_sc.procs[i].pid == pid && g_sc.procs[i].name[0] != '\0')
            return leave(copy_str(name, length, g_sc.procs[i].name));
    return leave(NVML_ERROR_NOT_FOUND);
}

static nvmlReturn_t zero_count(unsigned int *count)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    if (count == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *count = 0;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlUnitGetCount(unsigned int *unitCount) { return zero_count(unitCount); }
API nvmlReturn_t nvmlGetExcludedDeviceCount(unsigned int *deviceCount) { return zero_count(deviceCount); }

API nvmlReturn_t nvmlSystemGetHicVersion(unsigned int *hwbcCount, void *hwbcEntries)
{
    (void)hwbcEntries;
    return zero_count(hwbcCount);
}

/* ------------------------------------------------------------------------ */
/* Device enumeration                                                        */
/* ------------------------------------------------------------------------ */

static nvmlReturn_t device_count(unsigned int *count)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    if (count == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *count = (unsigned int)g_sc.gpu_count;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) { return device_count(deviceCount); }
API nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount) { return device_count(deviceCount); }

/* Hands out the handle of GPU i; called with g_mu held. */
static nvmlReturn_t give_gpu(int i, nvmlDevice_t *device)
{
    if (gpu_lost(&g_sc.gpus[i], scen_now()))
        return NVML_ERROR_GPU_IS_LOST;
    *device = gpu_handle(i);
    return NVML_SUCCESS;
}

static nvmlReturn_t handle_by_index(unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    if (device == NULL || index >= (unsigned int)g_sc.gpu_count)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    return leave(give_gpu((int)index, device));
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    return handle_by_index(index, device);
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return handle_by_index(index, device);
}

API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    if (uuid == NULL || device == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < g_sc.gpu_count; i++)
        if (strcmp(g_sc.gpus[i].uuid, uuid) == 0)
            return leave(give_gpu(i, device));
    for (int i = 0; i < g_sc.mig_count; i++) {
        if (strcmp(g_sc.migs[i].uuid, uuid) == 0) {
            if (gpu_lost(&g_sc.gpus[g_sc.migs[i].gpu], scen_now()))
                return leave(NVML_ERROR_GPU_IS_LOST);
            device->handle = &g_mig_handles[i];
            return leave(NVML_SUCCESS);
        }
    }
    return leave(NVML_ERROR_NOT_FOUND);
}

static nvmlReturn_t handle_by_pci(const char *busId, nvmlDevice_t *device)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned int dom, bus, dev;
    if (busId == NULL || device == NULL || pci_parse(busId, &dom, &bus, &dev) != 0)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < g_sc.gpu_count; i++) {
        const gpu_cfg *g = &g_sc.gpus[i];
        if (g->pci_domain == dom && g->pci_bus == bus && g->pci_device == dev)
            return leave(give_gpu(i, device));
    }
    return leave(NVML_ERROR_NOT_FOUND);
}

API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    return handle_by_pci(pciBusId, device);
}

API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
    return handle_by_pci(pciBusId, device);
}

/* ------------------------------------------------------------------------ */
/* Identity                                                                  */
/* ------------------------------------------------------------------------ */

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetUUID", 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    return leave(copy_str(uuid, length, c.mig ? c.mig->uuid : c.gpu->uuid));
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetName", 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    return leave(copy_str(name, length, c.mig ? c.mig->name : c.gpu->name));
}

API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetIndex", 0, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (index == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *index = (unsigned int)c.gpu_index;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetMinorNumber", 0, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (minorNumber == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *minorNumber = (unsigned int)c.gpu->minor;
    return leave(NVML_SUCCESS);
}

/* MIG devices report their parent's PCI location. */
static nvmlReturn_t pci_info(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetPciInfo", 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (pci == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    const gpu_cfg *g = c.gpu;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", g->pci_domain & 0xFFFF,
             g->pci_bus, g->pci_device);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", g->pci_domain, g->pci_bus, g->pci_device);
    pci->domain = g->pci_domain;
    pci->bus = g->pci_bus;
    pci->device = g->pci_device;
    pci->pciDeviceId = g->pci_device_id;
    pci->pciSubSystemId = g->pci_subsystem_id;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) { return pci_info(device, pci); }
API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci) { return pci_info(device, pci); }
API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci) { return pci_info(device, pci); }

API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetCudaComputeCapability", 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (major == NULL || minor == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *major = c.gpu->cc_major;
    *minor = c.gpu->cc_minor;
    return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/* total, reserved, used (allocated, excluding reserved) in bytes at c->t. */
static void memory_now(const dev_ctx *c, double *total, double *reserved, double *used)
{
    if (c->mig) {
        *total = c->mig->memory_total;
        *reserved = c->mig->memory_reserved;
        *used = mig_used(c->mig, c->t);
    } else {
        *total = c->gpu->memory_total;
        *reserved = c->gpu->memory_reserved;
        *used = gpu_used(c->gpu_index, c->t);
    }
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetMemoryInfo_v2", 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (memory == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    if (memory->version != MEMORY_V2_VERSION)
        return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    double total, reserved, used;
    memory_now(&c, &total, &reserved, &used);
    unsigned long long t = (unsigned long long)total, r = (unsigned long long)reserved,
                       u = (unsigned long long)used;
    memory->total = t;
    memory->reserved = r;
    memory->used = u;
    memory->free = t - r - u;
    return leave(NVML_SUCCESS);
}

/* v1: `used` includes the reserved memory, as NVML's v1 struct documents. */
API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, "GetMemoryInfo", 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    if (memory == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    double total, reserved, used;
    memory_now(&c, &total, &reserved, &used);
    unsigned long long t = (unsigned long long)total, r = (unsigned long long)reserved,
                       u = (unsigned long long)used;
    memory->total = t;
    memory->used = r + u;
    memory->free = t - r - u;
    return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------------ */
/* Utilization, temperature, power, clocks, PCIe                             */
/* ------------------------------------------------------------------------ */

#define ENTER_GPU(call)                                                  \
    dev_ctx c;                                                           \
    do {                                                                 \
        nvmlReturn_t rc_ = enter_dev(device, call, 0, &c);               \
        if (rc_ != NVML_SUCCESS)                                         \
            return rc_;                                                  \
    } while (0)

#define REQUIRE(ptr)                                                     \
    do {                                                                 \
        if ((ptr) == NULL)                                               \
            return leave(NVML_ERROR_INVALID_ARGUMENT);                   \
    } while (0)

/* Utilization is not available per GPU while MIG is enabled, as on real hardware. */
#define NOT_ON_MIG_ENABLED()                                             \
    do {                                                                 \
        if (c.gpu->mig == 1)                                             \
            return leave(NVML_ERROR_NOT_SUPPORTED);                      \
    } while (0)

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    ENTER_GPU("GetUtilizationRates");
    NOT_ON_MIG_ENABLED();
    REQUIRE(utilization);
    double u = c.gpu->util;
    if (c.gpu->util_period > 0)
        u += c.gpu->util_amplitude * sin(2.0 * 3.14159265358979323846 * c.t / c.gpu->util_period);
    utilization->gpu = pct(u);
    utilization->memory = pct(c.gpu->mem_util);
    return leave(NVML_SUCCESS);
}

static nvmlReturn_t codec_util(nvmlDevice_t device, const char *call, int dec, unsigned int *utilization,
                               unsigned int *samplingPeriodUs)
{
    ENTER_GPU(call);
    NOT_ON_MIG_ENABLED();
    REQUIRE(utilization);
    REQUIRE(samplingPeriodUs);
    *utilization = pct(dec ? c.gpu->dec_util : c.gpu->enc_util);
    *samplingPeriodUs = ENC_DEC_SAMPLING_PERIOD_US;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                                 unsigned int *samplingPeriodUs)
{
    return codec_util(device, "GetEncoderUtilization", 0, utilization, samplingPeriodUs);
}

API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                                 unsigned int *samplingPeriodUs)
{
    return codec_util(device, "GetDecoderUtilization", 1, utilization, samplingPeriodUs);
}

static int temperature_at(const gpu_cfg *g, double t)
{
    double v = g->temp + g->temp_slope * t;
    if (g->temp_max >= 0 && v > g->temp_max)
        v = g->temp_max;
    if (v < 0)
        v = 0;
    return (int)lround(v);
}

API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlEnum_t sensorType, unsigned int *temp)
{
    ENTER_GPU("GetTemperature");
    REQUIRE(temp);
    if (sensorType != NVML_TEMPERATURE_GPU)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *temp = (unsigned int)temperature_at(c.gpu, c.t);
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)
{
    ENTER_GPU("GetTemperatureV");
    REQUIRE(temperature);
    if (temperature->version != TEMPERATURE_V1_VERSION)
        return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    if (temperature->sensorType != NVML_TEMPERATURE_GPU)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    temperature->temperature = temperature_at(c.gpu, c.t);
    return leave(NVML_SUCCESS);
}

static unsigned int watts_to_mw(double w)
{
    if (w < 0)
        w = 0;
    return (unsigned int)llround(w * 1000.0);
}

API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    ENTER_GPU("GetPowerUsage");
    REQUIRE(power);
    *power = watts_to_mw(c.gpu->power_w);
    return leave(NVML_SUCCESS);
}

static nvmlReturn_t power_limit(nvmlDevice_t device, const char *call, unsigned int *limit)
{
    ENTER_GPU(call);
    REQUIRE(limit);
    *limit = watts_to_mw(c.gpu->power_limit_w);
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    return power_limit(device, "GetEnforcedPowerLimit", limit);
}

API nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
    return power_limit(device, "GetPowerManagementLimit", limit);
}

API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int *defaultLimit)
{
    return power_limit(device, "GetPowerManagementDefaultLimit", defaultLimit);
}

API nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int *minLimit,
                                                              unsigned int *maxLimit)
{
    ENTER_GPU("GetPowerManagementLimitConstraints");
    REQUIRE(minLimit);
    REQUIRE(maxLimit);
    *maxLimit = watts_to_mw(c.gpu->power_limit_w);
    *minLimit = *maxLimit / 4;
    return leave(NVML_SUCCESS);
}

/* mJ since the driver loaded: a fixed offset plus the integral of the (constant) power. */
API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    ENTER_GPU("GetTotalEnergyConsumption");
    REQUIRE(energy);
    double mj = c.gpu->energy_offset_mj + (c.gpu->power_w > 0 ? c.gpu->power_w : 0) * 1000.0 * c.t;
    *energy = (unsigned long long)(mj < 0 ? 0 : mj);
    return leave(NVML_SUCCESS);
}

static nvmlReturn_t clock_of(const dev_ctx *c, nvmlEnum_t type, int max, unsigned int *clock)
{
    const gpu_cfg *g = c->gpu;
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
        if (max) {
            *clock = type == NVML_CLOCK_SM ? g->max_sm_clock : g->max_graphics_clock;
        } else {
            unsigned int override;
            (void)active_reasons(c->gpu_index, c->t, &override);
            *clock = type == NVML_CLOCK_SM ? g->sm_clock : g->graphics_clock;
            if (override && override < *clock)
                *clock = override;
        }
        return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
        *clock = max ? g->max_mem_clock : g->mem_clock;
        return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO:
        *clock = max ? g->max_video_clock : g->video_clock;
        return NVML_SUCCESS;
    default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
}

API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlEnum_t type, unsigned int *clock)
{
    ENTER_GPU("GetClockInfo");
    REQUIRE(clock);
    return leave(clock_of(&c, type, 0, clock));
}

API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlEnum_t type, unsigned int *clock)
{
    ENTER_GPU("GetMaxClockInfo");
    REQUIRE(clock);
    return leave(clock_of(&c, type, 1, clock));
}

/* Clock id 0 is the current clock; the application/boost ids answer the maximum. */
API nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlEnum_t clockType, nvmlEnum_t clockId,
                                    unsigned int *clockMHz)
{
    ENTER_GPU("GetClock");
    REQUIRE(clockMHz);
    if (clockId < 0 || clockId > 3)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    return leave(clock_of(&c, clockType, clockId != NVML_CLOCK_ID_CURRENT, clockMHz));
}

API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlEnum_t counter, unsigned int *value)
{
    ENTER_GPU("GetPcieThroughput");
    REQUIRE(value);
    if (counter == NVML_PCIE_UTIL_TX_BYTES)
        *value = c.gpu->pcie_tx_kbps;
    else if (counter == NVML_PCIE_UTIL_RX_BYTES)
        *value = c.gpu->pcie_rx_kbps;
    else
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    return leave(NVML_SUCCESS);
}

static nvmlReturn_t current_reasons(nvmlDevice_t device, const char *call, unsigned long long *reasons)
{
    ENTER_GPU(call);
    REQUIRE(reasons);
    unsigned int override;
    *reasons = active_reasons(c.gpu_index, c.t, &override);
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    return current_reasons(device, "GetCurrentClocksEventReasons", reasons);
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    return current_reasons(device, "GetCurrentClocksThrottleReasons", reasons);
}

static nvmlReturn_t supported_reasons(nvmlDevice_t device, const char *call, unsigned long long *reasons)
{
    ENTER_GPU(call);
    REQUIRE(reasons);
    *reasons = SUPPORTED_CLOCK_EVENT_REASONS;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    return supported_reasons(device, "GetSupportedClocksEventReasons", reasons);
}

API nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons)
{
    return supported_reasons(device, "GetSupportedClocksThrottleReasons", reasons);
}

/* ------------------------------------------------------------------------ */
/* ECC, modes, states, fan                                                   */
/* ------------------------------------------------------------------------ */

API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlEnum_t errorType, nvmlEnum_t counterType,
                                             unsigned long long *eccCounts)
{
    ENTER_GPU("GetTotalEccErrors");
    REQUIRE(eccCounts);
    if ((errorType != NVML_MEMORY_ERROR_TYPE_CORRECTED && errorType != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
        (counterType != NVML_VOLATILE_ECC && counterType != NVML_AGGREGATE_ECC))
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    if (c.gpu->ecc != 1)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    int corrected = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED;
    /* A reset clears the volatile counters: they count from the newest one;
       the aggregate ones survive it. */
    double since = -1;
    if (counterType == NVML_VOLATILE_ECC) {
        since = last_reset(c.gpu_index, c.t);
        *eccCounts = since >= 0 ? 0 : corrected ? c.gpu->ecc_corrected : c.gpu->ecc_uncorrected;
    } else {
        *eccCounts = corrected ? c.gpu->ecc_corrected_aggregate : c.gpu->ecc_uncorrected_aggregate;
    }
    /* `ecc` records that fell due add to both counters. */
    for (int i = 0; i < g_sc.ecc_count; i++) {
        const ecc_cfg *e = &g_sc.eccs[i];
        if (e->gpu == c.gpu_index && e->at <= c.t && e->at > since)
            *eccCounts += corrected ? e->corrected : e->uncorrected;
    }
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnum_t *current, nvmlEnum_t *pending)
{
    ENTER_GPU("GetEccMode");
    REQUIRE(current);
    REQUIRE(pending);
    if (c.gpu->ecc < 0)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    *current = *pending = c.gpu->ecc ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnum_t *mode)
{
    ENTER_GPU("GetPersistenceMode");
    REQUIRE(mode);
    if (c.gpu->persistence < 0)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    *mode = c.gpu->persistence ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return leave(NVML_SUCCESS);
}

static nvmlReturn_t pstate(nvmlDevice_t device, const char *call, nvmlEnum_t *p)
{
    ENTER_GPU(call);
    REQUIRE(p);
    if (c.gpu->pstate < 0)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    *p = c.gpu->pstate;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlEnum_t *pState)
{
    return pstate(device, "GetPerformanceState", pState);
}

API nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, nvmlEnum_t *pState)
{
    return pstate(device, "GetPowerState", pState);
}

API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
    ENTER_GPU("GetFanSpeed");
    REQUIRE(speed);
    if (c.gpu->fan < 0)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    *speed = (unsigned int)c.gpu->fan;
    return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------------ */
/* Processes                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * The running-process lists.  version 1 writes nvmlProcessInfo_v1_t, 2 and 3
 * write nvmlProcessInfo_v2_t (the _v3 functions take nvmlProcessInfo_t, the
 * same layout).  Size protocol: if *infoCount is smaller than the number of
 * processes, *infoCount is set to that number and INSUFFICIENT_SIZE returned.
 */
static nvmlReturn_t running_processes(nvmlDevice_t device, const char *call, int graphics, int version,
                                      unsigned int *infoCount, void *infos)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, call, 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    REQUIRE(infoCount);
    const proc_cfg *match[MAX_PROCS];
    unsigned int n = 0;
    for (int i = 0; i < g_sc.proc_count; i++) {
        const proc_cfg *p = &g_sc.procs[i];
        if (p->gpu != c.gpu_index || p->graphics != graphics || !proc_present(p, c.t))
            continue;
        if (c.mig && (p->gpu_instance != c.mig->gpu_instance ||
                      (p->compute_instance != INVALID_INSTANCE_ID &&
                       p->compute_instance != c.mig->compute_instance)))
            continue;
        match[n++] = p;
    }
    if (*infoCount < n) {
        *infoCount = n;
        return leave(NVML_ERROR_INSUFFICIENT_SIZE);
    }
    if (n > 0 && infos == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    for (unsigned int i = 0; i < n; i++) {
        unsigned long long mem = (unsigned long long)proc_memory(match[i], c.t);
        if (version == 1) {
            nvmlProcessInfo_v1_t *out = (nvmlProcessInfo_v1_t *)infos + i;
            out->pid = match[i]->pid;
            out->usedGpuMemory = mem;
        } else {
            nvmlProcessInfo_v2_t *out = (nvmlProcessInfo_v2_t *)infos + i;
            out->pid = match[i]->pid;
            out->usedGpuMemory = mem;
            out->gpuInstanceId = match[i]->gpu_instance;
            out->computeInstanceId = match[i]->compute_instance;
        }
    }
    *infoCount = n;
    return leave(NVML_SUCCESS);
}

#define PROCESS_LIST(fn, call, graphics, version)                                            \
    API nvmlReturn_t fn(nvmlDevice_t device, unsigned int *infoCount, void *infos)          \
    {                                                                                        \
        return running_processes(device, call, graphics, version, infoCount, infos);         \
    }

PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v3, "GetComputeRunningProcesses", 0, 3)
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v2, "GetComputeRunningProcesses", 0, 2)
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses, "GetComputeRunningProcesses", 0, 1)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v3, "GetGraphicsRunningProcesses", 1, 3)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v2, "GetGraphicsRunningProcesses", 1, 2)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses, "GetGraphicsRunningProcesses", 1, 1)
/* MPS clients are never simulated: the list is always empty. */
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v3, "GetMPSComputeRunningProcesses", 2, 3)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v2, "GetMPSComputeRunningProcesses", 2, 2)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses, "GetMPSComputeRunningProcesses", 2, 1)

/*
 * Per-process utilization.  Every scenario second k a sample is taken for
 * each process present at k, time-stamped with the wall-clock microsecond at
 * which the scenario clock reached k.  The last UTIL_HISTORY_SECONDS seconds
 * are kept; samples newer than lastSeenTimeStamp are returned, oldest first.
 * With utilization == NULL the number available is returned with
 * INSUFFICIENT_SIZE; NOT_FOUND means there is nothing newer.
 */
API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                                 unsigned int *processSamplesCount,
                                                 unsigned long long lastSeenTimeStamp)
{
    ENTER_GPU("GetProcessUtilization");
    NOT_ON_MIG_ENABLED();
    REQUIRE(processSamplesCount);
    long long newest = (long long)floor(c.t);
    long long oldest = newest - (UTIL_HISTORY_SECONDS - 1);
    if (oldest < 0)
        oldest = 0;
    unsigned int n = 0, cap = utilization ? *processSamplesCount : 0;
    for (long long k = oldest; k <= newest; k++) {
        unsigned long long ts = wall_us_at((double)k);
        if (ts <= lastSeenTimeStamp)
            continue;
        for (int i = 0; i < g_sc.proc_count; i++) {
            const proc_cfg *p = &g_sc.procs[i];
            if (p->gpu != c.gpu_index || !proc_present(p, (double)k))
                continue;
            if (n < cap) {
                nvmlProcessUtilizationSample_t *s = &utilization[n];
                s->pid = p->pid;
                s->timeStamp = ts;
                s->smUtil = p->sm_util;
                s->memUtil = p->mem_util;
                s->encUtil = p->enc_util;
                s->decUtil = p->dec_util;
            }
            n++;
        }
    }
    if (n == 0) {
        *processSamplesCount = 0;
        return leave(NVML_ERROR_NOT_FOUND);
    }
    if (utilization == NULL || n > cap) {
        *processSamplesCount = n;
        return leave(NVML_ERROR_INSUFFICIENT_SIZE);
    }
    *processSamplesCount = n;
    return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------------ */
/* MIG                                                                       */
/* ------------------------------------------------------------------------ */

API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
    ENTER_GPU("GetMigMode");
    REQUIRE(currentMode);
    REQUIRE(pendingMode);
    if (c.gpu->mig < 0)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    *currentMode = *pendingMode = (unsigned int)c.gpu->mig;
    return leave(NVML_SUCCESS);
}

/* Zero unless MIG is enabled, as NVML documents. */
API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    ENTER_GPU("GetMaxMigDeviceCount");
    REQUIRE(count);
    *count = c.gpu->mig == 1 ? (unsigned int)c.gpu->max_mig_devices : 0;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                     nvmlDevice_t *migDevice)
{
    ENTER_GPU("GetMigDeviceHandleByIndex");
    REQUIRE(migDevice);
    if (c.gpu->mig < 0)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    if (c.gpu->mig == 0)
        return leave(NVML_ERROR_NOT_FOUND);
    if (index >= (unsigned int)c.gpu->max_mig_devices)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < g_sc.mig_count; i++) {
        if (g_sc.migs[i].gpu == c.gpu_index && g_sc.migs[i].index == (int)index) {
            migDevice->handle = &g_mig_handles[i];
            return leave(NVML_SUCCESS);
        }
    }
    return leave(NVML_ERROR_NOT_FOUND);
}

API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, NULL, 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    REQUIRE(isMigDevice);
    *isMigDevice = c.mig != NULL;
    return leave(NVML_SUCCESS);
}

/* The instance-id queries and the parent lookup only accept MIG handles. */
static nvmlReturn_t instance_id(nvmlDevice_t device, int compute, unsigned int *id)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, NULL, 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    REQUIRE(id);
    if (c.mig == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *id = compute ? c.mig->compute_instance : c.mig->gpu_instance;
    return leave(NVML_SUCCESS);
}

API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
    return instance_id(device, 0, id);
}

API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
    return instance_id(device, 1, id);
}

API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(migDevice, NULL, 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    REQUIRE(device);
    if (c.mig == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    *device = gpu_handle(c.gpu_index);
    return leave(NVML_SUCCESS);
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes)
{
    ENTER_GPU("GetSupportedEventTypes");
    REQUIRE(eventTypes);
    *eventTypes = SUPPORTED_EVENTS;
    return leave(NVML_SUCCESS);
}

/* Resolves a live event set; called with g_mu held. */
static struct nvmlEventSet_st *event_set(nvmlEventSet_t set)
{
    uintptr_t p = (uintptr_t)set.handle, b = (uintptr_t)g_sets;
    if (p < b || p >= b + sizeof g_sets || (p - b) % sizeof g_sets[0] != 0)
        return NULL;
    struct nvmlEventSet_st *s = set.handle;
    return s->used ? s : NULL;
}

API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    REQUIRE(set);
    for (int i = 0; i < MAX_EVENT_SETS; i++) {
        struct nvmlEventSet_st *s = &g_sets[i];
        if (s->used)
            continue;
        unsigned int gen = s->generation + 1;
        memset(s, 0, sizeof *s);
        s->used = 1;
        s->generation = gen;
        set->handle = s;
        return leave(NVML_SUCCESS);
    }
    return leave(NVML_ERROR_INSUFFICIENT_RESOURCES);
}

API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    struct nvmlEventSet_st *s = event_set(set);
    if (s == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    s->used = 0;
    s->generation++;
    pthread_cond_broadcast(&g_cv);
    return leave(NVML_SUCCESS);
}

/* Registering only unsupported types fails with NOT_SUPPORTED, as NVML does. */
API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set)
{
    ENTER_GPU("RegisterEvents");
    struct nvmlEventSet_st *s = event_set(set);
    if (s == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    if (eventTypes & ~SUPPORTED_EVENTS)
        return leave(NVML_ERROR_NOT_SUPPORTED);
    s->mask[c.gpu_index] |= eventTypes;
    pthread_cond_broadcast(&g_cv);
    return leave(NVML_SUCCESS);
}

static struct timespec mono_timespec(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    } else if (ts.tv_nsec < 0) {
        ts.tv_nsec = 0;
    }
    return ts;
}

/*
 * The earliest event this set has not been given yet, among the GPUs
 * registered on it for that event type: an XID record (*type EVENT_XID,
 * *idx into g_sc.xids) or one type of an ECC record (EVENT_DOUBLE_BIT_ECC
 * for its uncorrected errors, EVENT_SINGLE_BIT_ECC for its corrected ones;
 * *idx into g_sc.eccs).  Returns its scenario time, or -1 when nothing is
 * left.  Ties go to XIDs, then to file order, then double-bit before
 * single-bit.  Called with g_mu held.
 */
static double next_event(const struct nvmlEventSet_st *s, unsigned long long *type, int *idx)
{
    double best = -1;
    for (int i = 0; i < g_sc.xid_count; i++) {
        const xid_cfg *x = &g_sc.xids[i];
        if (s->delivered[i] || !(s->mask[x->gpu] & EVENT_XID))
            continue;
        if (best < 0 || x->at < best) {
            best = x->at;
            *type = EVENT_XID;
            *idx = i;
        }
    }
    static const unsigned long long ecc_types[] = {EVENT_DOUBLE_BIT_ECC, EVENT_SINGLE_BIT_ECC};
    for (int i = 0; i < g_sc.ecc_count; i++) {
        const ecc_cfg *e = &g_sc.eccs[i];
        for (size_t k = 0; k < sizeof ecc_types / sizeof ecc_types[0]; k++) {
            unsigned long long bit = ecc_types[k];
            unsigned long long count = bit == EVENT_DOUBLE_BIT_ECC ? e->uncorrected : e->corrected;
            if (count == 0 || (s->ecc_delivered[i] & bit) || !(s->mask[e->gpu] & bit))
                continue;
            if (best < 0 || e->at < best) {
                best = e->at;
                *type = bit;
                *idx = i;
            }
        }
    }
    return best;
}

/*
 * Waits up to timeoutms for the next event due for a GPU registered (for
 * that event type) on this set: XIDs, and the double-/single-bit ECC events
 * of `ecc` records.  Each record is delivered once per event set and type,
 * on the first wait at or after its scenario time -- including events that
 * fell due before the set was created, so a slow start does not lose them.
 */
static nvmlReturn_t event_wait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    struct nvmlEventSet_st *s = event_set(set);
    if (s == NULL || data == NULL)
        return leave(NVML_ERROR_INVALID_ARGUMENT);
    unsigned int gen = s->generation;
    double deadline = mono_now() + (double)timeoutms / 1000.0;
    for (;;) {
        if (g_refcount == 0)
            return leave(NVML_ERROR_UNINITIALIZED);
        if (!s->used || s->generation != gen)
            return leave(NVML_ERROR_INVALID_ARGUMENT);
        double t = scen_now();
        unsigned long long type = 0;
        int next = -1;
        double at = next_event(s, &type, &next);
        if (at >= 0 && at <= t) {
            memset(data, 0, sizeof *data);
            data->eventType = type;
            if (type == EVENT_XID) {
                s->delivered[next] = 1;
                data->device = gpu_handle(g_sc.xids[next].gpu);
                data->eventData = g_sc.xids[next].code;
            } else {
                /* NVML: eventData is 0 for every event but an XID. */
                s->ecc_delivered[next] |= (unsigned char)type;
                data->device = gpu_handle(g_sc.eccs[next].gpu);
            }
            data->gpuInstanceId = INVALID_INSTANCE_ID;
            data->computeInstanceId = INVALID_INSTANCE_ID;
            return leave(NVML_SUCCESS);
        }
        double now = mono_now();
        if (now >= deadline)
            return leave(NVML_ERROR_TIMEOUT);
        double wake = deadline;
        if (at >= 0) {
            double due = mono_at(at);
            if (due < wake)
                wake = due;
        }
        struct timespec ts = mono_timespec(wake);
        int err = pthread_cond_timedwait(&g_cv, &g_mu, &ts);
        if (err != 0 && err != ETIMEDOUT && err != EINTR)
            return leave(NVML_ERROR_UNKNOWN);
    }
}

API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    return event_wait(set, data, timeoutms);
}

/* go-nvml passes the same struct to the unversioned function. */
API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    return event_wait(set, data, timeoutms);
}

/* ------------------------------------------------------------------------ */
/* GPM: never supported                                                      */
/* ------------------------------------------------------------------------ */

API nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
    ENTER_GPU("GpmQueryDeviceSupport");
    REQUIRE(gpmSupport);
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
        return leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    gpmSupport->isSupportedDevice = 0;
    return leave(NVML_SUCCESS);
}

static nvmlReturn_t not_supported(void)
{
    nvmlReturn_t rc = enter();
    if (rc != NVML_SUCCESS)
        return rc;
    return leave(NVML_ERROR_NOT_SUPPORTED);
}

/* Per-device calls that are always NOT_SUPPORTED, after the init/handle/lost checks. */
static nvmlReturn_t device_not_supported(nvmlDevice_t device)
{
    dev_ctx c;
    nvmlReturn_t rc = enter_dev(device, NULL, 1, &c);
    if (rc != NVML_SUCCESS)
        return rc;
    return leave(NVML_ERROR_NOT_SUPPORTED);
}

/*
 * Stubs.  They take the exact parameter lists of go-nvml's header so that a
 * collector probing them gets a clean NOT_SUPPORTED rather than a symbol
 * lookup error; the parameters other than the device are deliberately unused.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

API nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample) { return not_supported(); }
API nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) { return not_supported(); }
API nvmlReturn_t nvmlGpmMetricsGet(void *metricsGet) { return not_supported(); }
API nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
    return device_not_supported(device);
}
API nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample)
{
    return device_not_supported(device);
}
API nvmlReturn_t nvmlGpmQueryIfStreamingEnabled(nvmlDevice_t device, unsigned int *state)
{
    return device_not_supported(device);
}
API nvmlReturn_t nvmlGpmSetStreamingEnabled(nvmlDevice_t device, unsigned int state)
{
    return device_not_supported(device);
}

API nvmlReturn_t nvmlEventSetWait_v3(nvmlEventSet_t set, void *params) { return not_supported(); }
API nvmlReturn_t nvmlSystemGetDriverBranch(void *branchInfo, unsigned int length) { return not_supported(); }
API nvmlReturn_t nvmlSystemGetTopologyGpuSet(unsigned int cpuNumber, unsigned int *count, nvmlDevice_t *devices)
{
    return not_supported();
}
API nvmlReturn_t nvmlDeviceGetHandleBySerial(const char *serial, nvmlDevice_t *device) { return not_supported(); }

#define DEV_STUB(fn, ...)                                                    \
    API nvmlReturn_t fn(nvmlDevice_t device, __VA_ARGS__)                    \
    {                                                                        \
        return device_not_supported(device);                                 \
    }

DEV_STUB(nvmlDeviceGetSerial, char *serial, unsigned int length)
DEV_STUB(nvmlDeviceGetBrand, nvmlEnum_t *type)
DEV_STUB(nvmlDeviceGetArchitecture, unsigned int *arch)
DEV_STUB(nvmlDeviceGetVbiosVersion, char *version, unsigned int length)
DEV_STUB(nvmlDeviceGetInforomVersion, nvmlEnum_t object, char *version, unsigned int length)
DEV_STUB(nvmlDeviceGetInforomImageVersion, char *version, unsigned int length)
DEV_STUB(nvmlDeviceGetBoardPartNumber, char *partNumber, unsigned int length)
DEV_STUB(nvmlDeviceGetBoardId, unsigned int *boardId)
DEV_STUB(nvmlDeviceGetMultiGpuBoard, unsigned int *multiGpuBool)
DEV_STUB(nvmlDeviceGetBAR1MemoryInfo, void *bar1Memory)
DEV_STUB(nvmlDeviceGetComputeMode, nvmlEnum_t *mode)
DEV_STUB(nvmlDeviceGetDisplayMode, nvmlEnum_t *display)
DEV_STUB(nvmlDeviceGetDisplayActive, nvmlEnum_t *isActive)
DEV_STUB(nvmlDeviceGetTemperatureThreshold, nvmlEnum_t thresholdType, unsigned int *temp)
DEV_STUB(nvmlDeviceGetMarginTemperature, void *marginTempInfo)
DEV_STUB(nvmlDeviceGetNumFans, unsigned int *numFans)
DEV_STUB(nvmlDeviceGetFanSpeed_v2, unsigned int fan, unsigned int *speed)
DEV_STUB(nvmlDeviceGetFanSpeedRPM, void *fanSpeed)
DEV_STUB(nvmlDeviceGetCoolerInfo, void *coolerInfo)
DEV_STUB(nvmlDeviceGetCurrPcieLinkGeneration, unsigned int *currLinkGen)
DEV_STUB(nvmlDeviceGetCurrPcieLinkWidth, unsigned int *currLinkWidth)
DEV_STUB(nvmlDeviceGetMaxPcieLinkGeneration, unsigned int *maxLinkGen)
DEV_STUB(nvmlDeviceGetMaxPcieLinkWidth, unsigned int *maxLinkWidth)
DEV_STUB(nvmlDeviceGetGpuMaxPcieLinkGeneration, unsigned int *maxLinkGenDevice)
DEV_STUB(nvmlDeviceGetPcieReplayCounter, unsigned int *value)
DEV_STUB(nvmlDeviceGetPcieSpeed, unsigned int *pcieSpeed)
DEV_STUB(nvmlDeviceGetMemoryErrorCounter, nvmlEnum_t errorType, nvmlEnum_t counterType, nvmlEnum_t locationType,
         unsigned long long *count)
DEV_STUB(nvmlDeviceGetRetiredPages, nvmlEnum_t cause, unsigned int *pageCount, unsigned long long *addresses)
DEV_STUB(nvmlDeviceGetRetiredPages_v2, nvmlEnum_t cause, unsigned int *pageCount, unsigned long long *addresses,
         unsigned long long *timestamps)
DEV_STUB(nvmlDeviceGetRetiredPagesPendingStatus, nvmlEnum_t *isPending)
DEV_STUB(nvmlDeviceGetRemappedRows, unsigned int *corrRows, unsigned int *uncRows, unsigned int *isPending,
         unsigned int *failureOccurred)
DEV_STUB(nvmlDeviceGetFieldValues, int valuesCount, void *values)
DEV_STUB(nvmlDeviceGetViolationStatus, nvmlEnum_t perfPolicyType, void *violTime)
DEV_STUB(nvmlDeviceGetSamples, nvmlEnum_t type, unsigned long long lastSeenTimeStamp, nvmlEnum_t *sampleValType,
         unsigned int *sampleCount, void *samples)
DEV_STUB(nvmlDeviceGetNvLinkState, unsigned int link, nvmlEnum_t *isActive)
DEV_STUB(nvmlDeviceGetNvLinkRemotePciInfo_v2, unsigned int link, nvmlPciInfo_t *pci)
DEV_STUB(nvmlDeviceGetAttributes_v2, void *attributes)
DEV_STUB(nvmlDeviceGetAttributes, void *attributes)
DEV_STUB(nvmlDeviceGetMemoryBusWidth, unsigned int *busWidth)
DEV_STUB(nvmlDeviceGetNumGpuCores, unsigned int *numCores)
DEV_STUB(nvmlDeviceGetApplicationsClock, nvmlEnum_t clockType, unsigned int *clockMHz)
DEV_STUB(nvmlDeviceGetDriverModel_v2, nvmlEnum_t *current, nvmlEnum_t *pending)
DEV_STUB(nvmlDeviceGetDriverModel, nvmlEnum_t *current, nvmlEnum_t *pending)
DEV_STUB(nvmlDeviceGetPciInfoExt, void *pci)
DEV_STUB(nvmlDeviceGetEncoderStats, unsigned int *sessionCount, unsigned int *averageFps,
         unsigned int *averageLatency)
DEV_STUB(nvmlDeviceGetEncoderSessions, unsigned int *sessionCount, void *sessionInfos)
DEV_STUB(nvmlDeviceGetFBCStats, void *fbcStats)
DEV_STUB(nvmlDeviceGetFBCSessions, unsigned int *sessionCount, void *sessionInfo)
DEV_STUB(nvmlDeviceGetProcessesUtilizationInfo, void *procesesUtilInfo)
DEV_STUB(nvmlDeviceGetGpuFabricInfo, void *gpuFabricInfo)
DEV_STUB(nvmlDeviceGetGpuFabricInfoV, void *gpuFabricInfo)
DEV_STUB(nvmlDeviceGetPowerSource, nvmlEnum_t *powerSource)
DEV_STUB(nvmlDeviceGetJpgUtilization, unsigned int *utilization, unsigned int *samplingPeriodUs)
DEV_STUB(nvmlDeviceGetOfaUtilization, unsigned int *utilization, unsigned int *samplingPeriodUs)
DEV_STUB(nvmlDeviceGetClkMonStatus, void *status)
DEV_STUB(nvmlDeviceGetAutoBoostedClocksEnabled, nvmlEnum_t *isEnabled, nvmlEnum_t *defaultIsEnabled)
DEV_STUB(nvmlDeviceGetPerformanceModes, void *perfModes)
DEV_STUB(nvmlDeviceGetCurrentClockFreqs, void *currentClockFreqs)
DEV_STUB(nvmlDeviceGetDynamicPstatesInfo, void *pDynamicPstatesInfo)
DEV_STUB(nvmlDeviceGetGspFirmwareMode, unsigned int *isEnabled, unsigned int *defaultMode)
DEV_STUB(nvmlDeviceGetGspFirmwareVersion, char *version)
DEV_STUB(nvmlDeviceGetModuleId, unsigned int *moduleId)
DEV_STUB(nvmlDeviceGetPlatformInfo, void *platformInfo)
DEV_STUB(nvmlDeviceGetPowerManagementMode, nvmlEnum_t *mode)
DEV_STUB(nvmlDeviceGetCpuAffinity, unsigned int cpuSetSize, unsigned long *cpuSet)
DEV_STUB(nvmlDeviceGetMemoryAffinity, unsigned int nodeSetSize, unsigned long *nodeSet, nvmlEnum_t scope)
DEV_STUB(nvmlDeviceGetTopologyCommonAncestor, nvmlDevice_t device2, nvmlEnum_t *pathInfo)
DEV_STUB(nvmlDeviceGetP2PStatus, nvmlDevice_t device2, nvmlEnum_t p2pIndex, nvmlEnum_t *p2pStatus)

#pragma GCC diagnostic pop
