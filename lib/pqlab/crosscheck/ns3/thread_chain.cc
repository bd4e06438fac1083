// pqlab's Thread transport cross-check on ns-3 (Debian libns3 3.37): a CASE handshake over a chain of
// IEEE 802.15.4 (lr-wpan) hops with 6LoWPAN and IPv6 route-over forwarding, Matter MRP in the application.
//
// Reads one scenario file written by pqlab.crosscheck.scenario_file (every number comes from pqlab's resolved
// `transport:` params and the CASE size model; nothing is typed here) and prints one result line per run.
//   thread_chain SCENARIO_FILE
// Scenario file: one "key value..." per line. Output: "# key value" header lines (what ns-3 actually used),
// then per run "run <fields>" (see kResultFields).
//
// The application layer follows pqlab.transport.reference (the same reading of Matter MRP, PQ-CASE Eq. 1, block
// transfer and pull segmentation); everything below it is ns-3's own: lr-wpan's unslotted CSMA-CA, ACKs, frame
// retries and interframe spacing, sixlowpan's IPHC and fragmentation, IPv6 fragmentation and forwarding, and a
// spectrum channel on which only neighbours are in range (topology "chain") or every node hears every other
// ("shared"). Loss: the time-based Gilbert-Elliott channel of PQ-CASE §IV-C as a post-reception error model
// (one process shared by every link; the state at a frame's start decides, as in pqlab).

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lr-wpan-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/sixlowpan-module.h"
#include "ns3/spectrum-module.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// ---------- scenario file ----------

struct ScenarioFile
{
    std::map<std::string, std::vector<double>> values;

    bool Has(const std::string& key) const { return values.count(key) > 0; }

    const std::vector<double>& List(const std::string& key) const
    {
        auto it = values.find(key);
        if (it == values.end())
        {
            std::fprintf(stderr, "scenario: missing key %s\n", key.c_str());
            std::exit(2);
        }
        return it->second;
    }

    double Num(const std::string& key) const
    {
        const auto& v = List(key);
        if (v.size() != 1)
        {
            std::fprintf(stderr, "scenario: key %s needs one value, has %zu\n", key.c_str(), v.size());
            std::exit(2);
        }
        return v[0];
    }

    int64_t Int(const std::string& key) const { return static_cast<int64_t>(std::llround(Num(key))); }
};

ScenarioFile
ReadScenario(const std::string& path)
{
    ScenarioFile s;
    std::ifstream in(path);
    if (!in)
    {
        std::fprintf(stderr, "scenario: cannot open %s\n", path.c_str());
        std::exit(2);
    }
    std::string line;
    int lineno = 0;
    while (std::getline(in, line))
    {
        ++lineno;
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::istringstream words(line);
        std::string key;
        words >> key;
        std::vector<double> vals;
        std::string w;
        while (words >> w)
        {
            char* end = nullptr;
            double v = std::strtod(w.c_str(), &end);
            if (end == w.c_str() || *end != '\0')
            {
                std::fprintf(stderr, "scenario: line %d: %s: not a number: %s\n", lineno, key.c_str(), w.c_str());
                std::exit(2);
            }
            vals.push_back(v);
        }
        s.values[key] = vals;
    }
    return s;
}

// ---------- the shared Gilbert-Elliott channel ----------

// Continuous-time two-state channel; sojourns exponential (mean burst_us in the bad state, good_us in the good
// one), initial state from the stationary law. The switch times are kept, so the state at any earlier instant
// can be read: ns-3 asks when a frame's reception ends, and frames on different links overlap.
class GilbertElliott : public Object
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("pqlab::GilbertElliott").SetParent<Object>().SetGroupName("pqlab");
        return tid;
    }

    void Configure(double fractionBad, double burstUs, double goodUs, int64_t stream)
    {
        m_fractionBad = fractionBad;
        m_burstUs = burstUs;
        m_goodUs = goodUs;
        m_uniform = CreateObject<UniformRandomVariable>();
        m_exp = CreateObject<ExponentialRandomVariable>();
        m_uniform->SetStream(stream);
        m_exp->SetStream(stream + 1);
        m_switches.clear();
        m_bad0 = false;
        if (m_fractionBad > 0)
        {
            m_bad0 = m_uniform->GetValue() < m_fractionBad;
            m_switches.push_back(Sojourn(m_bad0));
        }
    }

    bool BadAt(double tUs)
    {
        if (m_fractionBad <= 0)
        {
            return false;
        }
        while (m_switches.back() <= tUs)
        {
            bool badNow = m_bad0 ^ (m_switches.size() % 2 == 1);
            m_switches.push_back(m_switches.back() + Sojourn(badNow));
        }
        auto passed = std::upper_bound(m_switches.begin(), m_switches.end(), tUs) - m_switches.begin();
        return m_bad0 ^ (passed % 2 == 1);
    }

  private:
    double Sojourn(bool bad) { return m_exp->GetValue(bad ? m_burstUs : m_goodUs, 0.0); }

    double m_fractionBad = 0;
    double m_burstUs = 0;
    double m_goodUs = 0;
    bool m_bad0 = false;
    std::vector<double> m_switches; // absolute switch times (us); state flips at each
    Ptr<UniformRandomVariable> m_uniform;
    Ptr<ExponentialRandomVariable> m_exp;
};

// Post-reception error model of every PHY: a frame (or imm-ACK) is lost with p_good / p_bad by the channel state
// at the frame's first symbol.
class FrameLossModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("pqlab::FrameLossModel").SetParent<ErrorModel>().SetGroupName("pqlab");
        return tid;
    }

    void Configure(Ptr<GilbertElliott> channel, double pGood, double pBad, bool ackNever, double byteUs,
                   int phyBytes, int ackPsdu, int64_t stream)
    {
        m_channel = channel;
        m_pGood = pGood;
        m_pBad = pBad;
        m_ackNever = ackNever;
        m_byteUs = byteUs;
        m_phyBytes = phyBytes;
        m_ackPsdu = ackPsdu;
        m_uniform = CreateObject<UniformRandomVariable>();
        m_uniform->SetStream(stream);
        Enable();
    }

    uint64_t lost = 0;

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        uint32_t psdu = p->GetSize();
        if (m_ackNever && psdu == static_cast<uint32_t>(m_ackPsdu))
        {
            return false;
        }
        double startUs = Simulator::Now().GetNanoSeconds() / 1000.0 - (m_phyBytes + psdu) * m_byteUs;
        double p_loss = m_channel->BadAt(startUs) ? m_pBad : m_pGood;
        if (p_loss <= 0)
        {
            return false;
        }
        bool isLost = m_uniform->GetValue() < p_loss;
        lost += isLost;
        return isLost;
    }

    void DoReset() override {}

    Ptr<GilbertElliott> m_channel;
    double m_pGood = 0, m_pBad = 0, m_byteUs = 32;
    bool m_ackNever = false;
    int m_phyBytes = 6, m_ackPsdu = 5;
    Ptr<UniformRandomVariable> m_uniform;
};

// ---------- a work-around for an ns-3 3.37 PHY crash, and its detector ----------

// ns-3 3.37's LrWpanPhy can sit in BUSY_RX without a frame under reception: (a) when its MAC asks for TX_ON (to send
// an imm-ACK) right after a reception ended, the state stays BUSY_RX for the 192-us turnaround; (b) when a reception
// was cut short by a forced TX_ON and a later frame became the current one, the stale "reception canceled" flag keeps
// the PHY from returning to RX_ON at that frame's end, and no request of its MAC moves it out of BUSY_RX again. A
// signal arriving in that state makes StartRx dereference the absent frame (LrWpanPhy::CheckInterference: a
// segmentation fault). This PHY ignores such a signal — a radio in its turnaround receives nothing — and counts it.
// Case (b) leaves the radio deaf (every CCA busy, nothing received) until the run ends: a fault of ns-3, not a
// transport outcome, so a run where the state outlasts a turnaround is flagged (phy_fault) and the analysis sets it
// apart.
class GuardedPhy : public LrWpanPhy
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("pqlab::GuardedPhy").SetParent<LrWpanPhy>().SetGroupName("pqlab");
        return tid;
    }

    // after CreateObject (an object's trace sources are found through its TypeId, set once it is constructed)
    void Hook(Time turnaround)
    {
        m_turnaround = turnaround;
        bool ok = TraceConnectWithoutContext("TrxStateValue", MakeCallback(&GuardedPhy::State, this)) &&
                  TraceConnectWithoutContext("PhyRxBegin", MakeCallback(&GuardedPhy::RxBegin, this)) &&
                  TraceConnectWithoutContext("PhyRxEnd", MakeCallback(&GuardedPhy::RxEnd, this));
        NS_ABORT_MSG_UNLESS(ok, "GuardedPhy: cannot follow the PHY's state");
    }

    void StartRx(Ptr<SpectrumSignalParameters> params) override
    {
        if (m_state == IEEE_802_15_4_PHY_BUSY_RX && !m_receiving)
        {
            if (!m_badSince.IsStrictlyPositive())
            {
                m_badSince = Simulator::Now() + NanoSeconds(1); // positive even at t = 0
            }
            else if (Simulator::Now() - m_badSince > m_turnaround)
            {
                stuck = true;
            }
            ++ignored;
            return;
        }
        LrWpanPhy::StartRx(params);
    }

    uint64_t ignored = 0;
    bool stuck = false;

  private:
    void State(LrWpanPhyEnumeration, LrWpanPhyEnumeration now)
    {
        m_state = now;
        m_badSince = Time(0);
    }

    void RxBegin(Ptr<const Packet>) { m_receiving = true; }

    void RxEnd(Ptr<const Packet>, double) { m_receiving = false; }

    LrWpanPhyEnumeration m_state = IEEE_802_15_4_PHY_IDLE;
    bool m_receiving = false;
    Time m_badSince = Time(0);
    Time m_turnaround;
};

// ---------- the handshake ----------

enum
{
    DOWN = 0,
    UP = 1
};

enum
{
    SINGLE = 0,
    IPV6 = 1,
    PULL = 2,
    BLOCK = 3
};

enum
{
    WHOLE = 0,
    SEGMENT = 1,
    REQUEST = 2
};

enum
{
    K_DATA = 0,
    K_ACK = 1,
    K_BITMAP = 2
};

constexpr uint16_t kPort = 5540; // Matter's UDP port
constexpr uint32_t kHeader = 24; // the application header every datagram carries (fits the smallest unit)
constexpr uint8_t kMagic = 0x4d;
constexpr int kNone = 0xffff;

struct Msg
{
    int hs, kind, seg, dir, mode;
    std::vector<uint32_t> units;  // UDP payload bytes of each unit (pqlab's plan)
    std::vector<double> unitLfUs; // each unit's loss-free delivery time (pqlab's estimate, for piggyback ACKs)
    int tx = 0;
    bool acked = false, delivered = false;
    int timerGen = 0;
    int firstCopy = -1;
    uint64_t received = 0, confirmed = 0;
};

struct CopyState
{
    int delivered = 0;
    bool piggyDone = false;
};

struct Header
{
    uint8_t kind = 0, copy = 0, pos = 0, tag = 0, nunits = 0, last = 0;
    uint16_t msg = 0, piggy = kNone;
    uint64_t bitmap = 0;
};

void
Put(uint8_t* b, const Header& h)
{
    b[0] = kMagic;
    b[1] = h.kind;
    b[2] = h.copy;
    b[3] = h.pos;
    b[4] = h.tag;
    b[5] = h.nunits;
    b[6] = h.last;
    b[7] = 0;
    std::memcpy(b + 8, &h.msg, 2);
    std::memcpy(b + 10, &h.piggy, 2);
    std::memcpy(b + 12, &h.bitmap, 8);
}

bool
Get(const uint8_t* b, uint32_t size, Header& h)
{
    if (size < kHeader || b[0] != kMagic)
    {
        return false;
    }
    h.kind = b[1];
    h.copy = b[2];
    h.pos = b[3];
    h.tag = b[4];
    h.nunits = b[5];
    h.last = b[6];
    std::memcpy(&h.msg, b + 8, 2);
    std::memcpy(&h.piggy, b + 10, 2);
    std::memcpy(&h.bitmap, b + 12, 8);
    return true;
}

struct Counters
{
    uint64_t dataFrames = 0;     // data frames put on the air, MAC retries included (imm-ACKs not)
    uint64_t ackFrames = 0;      // imm-ACKs sent
    uint64_t macDrops = 0;       // frames the MAC gave up on (retries exhausted or channel access failure)
    uint64_t noAckDrops = 0;     // ... after every retry went unacknowledged
    uint64_t ccaDrops = 0;       // ... because CSMA-CA found the channel busy macMaxCSMABackoffs+1 times
    uint64_t phyRxDrops = 0;     // receptions a PHY dropped (collision, busy, or the loss model)
    uint64_t datagramsSent = 0;  // UDP datagrams the application handed over
    uint64_t datagramsRecv = 0;  // UDP datagrams the application received
    uint64_t mrpRetrans = 0;     // MRP retransmissions (timer expiry or block resend)
    uint64_t psduBytes = 0;      // PSDU bytes of the data frames on the air
    std::map<uint32_t, uint64_t> psduSizes; // first-attempt data-frame PSDU sizes (for the framing table)
};

struct RunConfig
{
    int hops = 1;
    int mode = 0; // 0 handshake, 1 transfer (one message one way, no MRP)
    double spacing = 10.0;
    bool shared = false;
    // MRP and the application (pqlab's thread params)
    double devInterval = 0, ctrlInterval = 0, boost = 0, margin = 1.1, base = 1.6, jitter = 0.25;
    int expCap = 4, mrpTx = 5;
    double standalone = 0, ctrlCompute = 0, devCompute2 = 0, devCompute3 = 0, maxTime = 0;
    bool dupAck = false, ackOnArrival = false, blockHandoff = false;
    int msgMode[4] = {0, 0, 0, 0};
    uint32_t msgBytes[4] = {0, 0, 0, 0};
    std::vector<uint32_t> msgUnits[4];
    std::vector<double> msgUnitLf[4];
    uint32_t ackPayload = 0;
    double ackLf = 0;
    uint32_t bitmapPayload[4] = {0, 0, 0, 0};
    double bitmapLf[4] = {0, 0, 0, 0};
    uint32_t requestPayload[4] = {0, 0, 0, 0};
    double requestLf[4] = {0, 0, 0, 0};
};

class Handshake
{
  public:
    Handshake(const RunConfig& cfg, Ptr<Socket> ctrl, Ptr<Socket> dev, Ipv6Address ctrlAddr, Ipv6Address devAddr,
              Counters& counters, int64_t stream)
        : c(cfg),
          m_counters(counters)
    {
        m_sock[DOWN] = ctrl; // the controller sends downwards
        m_sock[UP] = dev;
        m_dest[DOWN] = devAddr;
        m_dest[UP] = ctrlAddr;
        m_jitter = CreateObject<UniformRandomVariable>();
        m_jitter->SetStream(stream);
        ctrl->SetRecvCallback(MakeCallback(&Handshake::Receive, this));
        dev->SetRecvCallback(MakeCallback(&Handshake::Receive, this));
    }

    // result
    bool done = false, ok = false;
    int failed = -1;
    double timeUs = 0;
    int spurious = 0;
    uint64_t enq[2] = {0, 0}, deq[2] = {0, 0}; // MAC queue counts at the controller (0) and the device (1)

    void Start() { StartMessage(0, Now()); }

    void Transfer()
    {
        // one message, controller -> device, no MRP: the time until it is complete at the device
        m_transfer = true;
        Msg m;
        m.hs = 0;
        m.kind = WHOLE;
        m.seg = 0;
        m.dir = DOWN;
        m.mode = c.msgMode[0];
        m.units = c.msgUnits[0];
        m_msgs.push_back(m);
        SendCopy(0, Now(), AllTags(0));
    }

    void Dequeued(int node)
    {
        ++deq[node];
        auto it = m_leaveWatch.begin();
        while (it != m_leaveWatch.end())
        {
            if (it->node == node && deq[node] >= it->target)
            {
                if (m_msgs[it->msg].timerGen == it->gen)
                {
                    ArmTimer(it->msg, Now());
                }
                it = m_leaveWatch.erase(it);
            }
            else
            {
                ++it;
            }
        }
    }

    void TimeLimit()
    {
        if (done)
        {
            return;
        }
        int failing = 3;
        for (const auto& m : m_msgs)
        {
            if (!m.delivered)
            {
                failing = m.hs;
                break;
            }
        }
        Finish(false, c.maxTime, failing);
    }

  private:
    struct Watch
    {
        int node, msg, gen;
        uint64_t target;
    };

    const RunConfig& c;
    Counters& m_counters;
    Ptr<Socket> m_sock[2];
    Ipv6Address m_dest[2];
    Ptr<UniformRandomVariable> m_jitter;
    std::vector<Msg> m_msgs;
    std::map<std::pair<int, int>, CopyState> m_copies; // (msg, copy) at the receiver
    int m_lastRx[2] = {-1, -1};                         // per node (0 controller, 1 device)
    int m_ackGen[2] = {0, 0};
    std::vector<Watch> m_leaveWatch;
    bool m_transfer = false;

    static double Now() { return Simulator::Now().GetNanoSeconds() / 1000.0; }

    static int NodeOf(int dir) { return dir == DOWN ? 0 : 1; } // the sender's endpoint index

    void Finish(bool success, double t, int failedMsg)
    {
        if (done)
        {
            return;
        }
        done = true;
        ok = success;
        timeUs = t;
        failed = failedMsg;
        spurious = 0;
        for (const auto& m : m_msgs)
        {
            if (m.firstCopy >= 0)
            {
                spurious += m.tx - 1 - m.firstCopy;
            }
        }
        Simulator::Stop();
    }

    std::vector<int> AllTags(int mi) const
    {
        std::vector<int> tags;
        size_t n = m_msgs[mi].mode == IPV6 ? 1 : m_msgs[mi].units.size();
        for (size_t i = 0; i < n; ++i)
        {
            tags.push_back(static_cast<int>(i));
        }
        return tags;
    }

    void SendDatagram(int dir, uint32_t size, const Header& h)
    {
        std::vector<uint8_t> buf(std::max(size, kHeader), 0);
        Put(buf.data(), h);
        Ptr<Packet> p = Create<Packet>(buf.data(), buf.size());
        m_sock[dir]->SendTo(p, 0, Inet6SocketAddress(m_dest[dir], kPort));
        ++m_counters.datagramsSent;
    }

    // one copy of a message: its units as UDP datagrams, handed over at once (IPv6 fragmentation: the whole
    // message is one datagram that IPv6 fragments)
    void SendCopy(int mi, double t, const std::vector<int>& tags)
    {
        Msg& m = m_msgs[mi];
        Header h;
        h.kind = K_DATA;
        h.msg = static_cast<uint16_t>(mi);
        h.copy = static_cast<uint8_t>(m.tx > 0 ? m.tx - 1 : 0);
        h.nunits = static_cast<uint8_t>(tags.size());
        int node = NodeOf(m.dir);
        h.piggy = m_transfer || m_lastRx[node] < 0 ? kNone : static_cast<uint16_t>(m_lastRx[node]);
        for (size_t i = 0; i < tags.size(); ++i)
        {
            h.pos = static_cast<uint8_t>(i);
            h.tag = static_cast<uint8_t>(tags[i]);
            h.last = i + 1 == tags.size();
            uint32_t size = m.mode == IPV6 ? c.msgBytes[m.hs] : m.units[tags[i]];
            SendDatagram(m.dir, size, h);
        }
        (void)t;
    }

    void SendReliable(int mi, double t, const std::vector<int>& tags, bool count)
    {
        Msg& m = m_msgs[mi];
        if (count)
        {
            ++m.tx;
        }
        int node = NodeOf(m.dir);
        int piggy = m_lastRx[node];
        if (!c.ackOnArrival && piggy >= 0)
        {
            // the paper's estimate: the ACK arrives after the loss-free delivery time of the reply's first
            // unit (the whole message for IPv6 fragmentation), computed by pqlab for its plan
            double d = 0;
            if (m.mode == IPV6)
            {
                for (double x : m.unitLfUs)
                {
                    d += x;
                }
            }
            else
            {
                d = m.unitLfUs[tags[0]];
            }
            Simulator::Schedule(MicroSeconds(static_cast<int64_t>(d)), &Handshake::Acknowledge, this, piggy);
        }
        SendCopy(mi, t, tags);
        ++m_ackGen[node]; // a pending standalone ACK is now piggybacked
        ++m.timerGen;
        if (m.mode != BLOCK || c.blockHandoff)
        {
            ArmTimer(mi, t);
        }
        else
        {
            // the timer starts when the copy's last segment has left the sender (its MAC queue drained them)
            m_leaveWatch.push_back({NodeOf(m.dir), mi, m.timerGen, enq[NodeOf(m.dir)]});
        }
    }

    double Backoff(const Msg& m)
    {
        int n = m.tx - 1;
        double interval, boost;
        if (m.dir == UP)
        {
            interval = c.ctrlInterval;
            boost = c.boost;
        }
        else
        {
            interval = c.devInterval;
            boost = 0;
        }
        int e = std::min(std::max(0, n - 1), c.expCap);
        double u = m_jitter->GetValue();
        return std::floor(interval * c.margin * std::pow(c.base, e) * (1.0 + c.jitter * u)) + boost;
    }

    void ArmTimer(int mi, double t)
    {
        Msg& m = m_msgs[mi];
        double at = t + Backoff(m);
        Simulator::Schedule(MicroSeconds(static_cast<int64_t>(at - Now())), &Handshake::TimerFired, this, mi,
                            m.timerGen);
    }

    void TimerFired(int mi, int gen)
    {
        Msg& m = m_msgs[mi];
        if (done || m.acked || gen != m.timerGen)
        {
            return;
        }
        if (m.tx >= c.mrpTx)
        {
            Finish(false, Now(), m.hs);
            return;
        }
        ++m_counters.mrpRetrans;
        Resend(mi, Now(), true);
    }

    void Resend(int mi, double t, bool count)
    {
        Msg& m = m_msgs[mi];
        if (m.mode == BLOCK)
        {
            std::vector<int> tags;
            for (size_t i = 0; i < m.units.size(); ++i)
            {
                if (!(m.confirmed >> i & 1))
                {
                    tags.push_back(static_cast<int>(i));
                }
            }
            SendReliable(mi, t, tags, count);
        }
        else
        {
            SendReliable(mi, t, AllTags(mi), count);
        }
    }

    void Acknowledge(int mi)
    {
        if (mi >= 0 && mi < static_cast<int>(m_msgs.size()))
        {
            m_msgs[mi].acked = true;
            ++m_msgs[mi].timerGen;
        }
    }

    void NewMessage(int hs, int kind, int seg, int dir, double t)
    {
        Msg m;
        m.hs = hs;
        m.kind = kind;
        m.seg = seg;
        m.dir = dir;
        if (kind == WHOLE)
        {
            m.mode = c.msgMode[hs];
            m.units = c.msgUnits[hs];
            m.unitLfUs = c.msgUnitLf[hs];
        }
        else if (kind == SEGMENT)
        {
            m.mode = SINGLE;
            m.units = {c.msgUnits[hs][seg]};
            m.unitLfUs = {c.msgUnitLf[hs][seg]};
        }
        else
        {
            m.mode = SINGLE;
            m.units = {c.requestPayload[hs]};
            m.unitLfUs = {c.requestLf[hs]};
        }
        m_msgs.push_back(m);
        int mi = static_cast<int>(m_msgs.size()) - 1;
        SendReliable(mi, t, AllTags(mi), true);
    }

    void StartMessage(int hs, double t)
    {
        int dir = hs % 2 == 0 ? DOWN : UP;
        if (c.msgMode[hs] == PULL)
        {
            NewMessage(hs, SEGMENT, 0, dir, t);
        }
        else
        {
            NewMessage(hs, WHOLE, 0, dir, t);
        }
    }

    void Application(int hs, double t)
    {
        if (hs == 3)
        {
            Finish(true, t, -1);
            return;
        }
        int next = hs + 1;
        double compute = next == 1 ? c.devCompute2 : next == 2 ? c.ctrlCompute : c.devCompute3;
        Simulator::Schedule(MicroSeconds(static_cast<int64_t>(compute)), &Handshake::StartMessage, this, next,
                            t + compute);
    }

    void Completed(int mi, double t)
    {
        const Msg& m = m_msgs[mi];
        int n = static_cast<int>(c.msgUnits[m.hs].size());
        if (m.kind == SEGMENT && m.seg < n - 1)
        {
            NewMessage(m.hs, REQUEST, m.seg + 1, 1 - m.dir, t);
        }
        else if (m.kind == REQUEST)
        {
            NewMessage(m.hs, SEGMENT, m.seg, 1 - m.dir, t);
        }
        else
        {
            Application(m.hs, t);
        }
    }

    void SendStandaloneAck(int receiverNode, int mi)
    {
        Header h;
        h.kind = K_ACK;
        h.msg = static_cast<uint16_t>(mi);
        h.nunits = 1;
        h.last = 1;
        SendDatagram(receiverNode == 0 ? DOWN : UP, c.ackPayload, h);
    }

    void StandaloneTimer(int node, int gen)
    {
        if (done || gen != m_ackGen[node] || m_lastRx[node] < 0)
        {
            return;
        }
        SendStandaloneAck(node, m_lastRx[node]);
    }

    void Receive(Ptr<Socket> socket)
    {
        Ptr<Packet> p;
        Address from;
        while ((p = socket->RecvFrom(from)))
        {
            ++m_counters.datagramsRecv;
            std::vector<uint8_t> buf(p->GetSize());
            p->CopyData(buf.data(), buf.size());
            Header h;
            if (!Get(buf.data(), static_cast<uint32_t>(buf.size()), h) || h.msg >= m_msgs.size())
            {
                continue;
            }
            // handled in an event of its own at the same instant: anything the application sends in reply
            // then starts outside the PHY's reception call (ns-3 3.37's LrWpanPhy::EndRx is not re-entrant:
            // a send from inside it can leave the PHY busy without a packet, and the next reception crashes)
            Simulator::ScheduleNow(&Handshake::Deliver, this, h, Now());
        }
    }

    void Deliver(const Header& h, double t)
    {
        if (done)
        {
            return;
        }
        int mi = h.msg;
        Msg& m = m_msgs[mi];
        if (h.kind == K_ACK)
        {
            Acknowledge(mi);
            return;
        }
        if (h.kind == K_BITMAP)
        {
            m.confirmed |= h.bitmap;
            uint64_t all = AllBits(m);
            if (m.confirmed == all)
            {
                Acknowledge(mi);
            }
            else if (!m.acked)
            {
                ++m_counters.mrpRetrans;
                Resend(mi, t, false);
            }
            return;
        }
        CopyState& cs = m_copies[{mi, h.copy}];
        ++cs.delivered;
        bool whole = cs.delivered == h.nunits;
        if (m_transfer)
        {
            if (m.mode == BLOCK)
            {
                m.received |= uint64_t(1) << h.tag;
            }
            if ((m.mode == BLOCK && m.received == AllBits(m)) || (m.mode != BLOCK && whole))
            {
                Finish(true, t, -1);
            }
            return;
        }
        if (c.ackOnArrival && h.piggy != kNone && !cs.piggyDone && (m.mode != IPV6 || whole))
        {
            cs.piggyDone = true;
            Acknowledge(h.piggy);
        }
        bool complete;
        if (m.mode == BLOCK)
        {
            m.received |= uint64_t(1) << h.tag;
            if (h.last)
            {
                Header b;
                b.kind = K_BITMAP;
                b.msg = static_cast<uint16_t>(mi);
                b.nunits = 1;
                b.last = 1;
                b.bitmap = m.received;
                SendDatagram(1 - m.dir, c.bitmapPayload[m.hs], b);
            }
            complete = m.received == AllBits(m);
        }
        else if (m.mode == IPV6)
        {
            complete = whole;
        }
        else
        {
            complete = true;
        }
        if (!complete)
        {
            return;
        }
        if (m.firstCopy < 0 || h.copy < m.firstCopy)
        {
            m.firstCopy = h.copy;
        }
        int receiver = m.dir == DOWN ? 1 : 0;
        if (m.delivered)
        {
            if (c.dupAck && m.mode != BLOCK)
            {
                SendStandaloneAck(receiver, mi);
            }
            return;
        }
        m.delivered = true;
        if (m.mode != BLOCK)
        {
            m_lastRx[receiver] = mi;
            ++m_ackGen[receiver];
            Simulator::Schedule(MicroSeconds(static_cast<int64_t>(c.standalone)), &Handshake::StandaloneTimer, this,
                                receiver, m_ackGen[receiver]);
        }
        Completed(mi, t);
    }

    static uint64_t AllBits(const Msg& m)
    {
        size_t n = m.units.size();
        return n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
    }
};

// ---------- traces ----------

Counters* g_counters = nullptr;
Handshake* g_handshake = nullptr;

void
OnMacTx(Ptr<const Packet> p)
{
    LrWpanMacHeader hdr;
    p->PeekHeader(hdr);
    if (hdr.IsAcknowledgment())
    {
        ++g_counters->ackFrames;
        return;
    }
    ++g_counters->dataFrames;
    g_counters->psduBytes += p->GetSize();
}

void
OnMacEnqueue(int node, Ptr<const Packet> p)
{
    ++g_counters->psduSizes[p->GetSize()]; // MAC header + payload + FCS: the PSDU
    if (g_handshake && node >= 0)
    {
        ++g_handshake->enq[node];
    }
}

void
OnMacDequeue(int node, Ptr<const Packet>)
{
    if (g_handshake && node >= 0)
    {
        g_handshake->Dequeued(node);
    }
}

void
OnMacDrop(Ptr<const Packet>)
{
    ++g_counters->macDrops;
}

bool g_lastOk[17];
int g_maxRetries = 0;

void
OnMacTxOk(int node, Ptr<const Packet>)
{
    g_lastOk[node] = true;
}

// every unicast frame leaving a MAC queue: acknowledged, or dropped after its retries or a channel access failure
void
OnMacSent(int node, Ptr<const Packet>, uint8_t attempts, uint8_t)
{
    if (!g_lastOk[node])
    {
        if (attempts > g_maxRetries)
        {
            ++g_counters->noAckDrops;
        }
        else
        {
            ++g_counters->ccaDrops;
        }
    }
    g_lastOk[node] = false;
}

void
OnPhyRxDrop(Ptr<const Packet>)
{
    ++g_counters->phyRxDrops;
}

// ---------- one run ----------

struct RunResult
{
    bool ok;
    double timeUs;
    int failed;
    Counters counters;
    int spurious;
    uint64_t lossModelDrops;
    uint64_t guardIgnored; // signals GuardedPhy ignored in BUSY_RX without a frame
    bool phyFault;         // a PHY stayed in that state longer than a turnaround (ns-3's stale-flag defect)
};

RunResult
RunOnce(const ScenarioFile& s, const RunConfig& c, uint32_t run)
{
    RngSeedManager::SetSeed(static_cast<uint32_t>(s.Int("seed") % 4294967295u) + 1);
    RngSeedManager::SetRun(run + 1);

    int n = c.hops + 1;
    NodeContainer nodes;
    nodes.Create(n);
    MobilityHelper mobility;
    Ptr<ListPositionAllocator> positions = CreateObject<ListPositionAllocator>();
    for (int i = 0; i < n; ++i)
    {
        positions->Add(Vector(i * c.spacing, 0, 0));
    }
    mobility.SetPositionAllocator(positions);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(nodes);

    // only neighbours in range (chain) or every node (shared); in range, no path loss
    Ptr<SingleModelSpectrumChannel> channel = CreateObject<SingleModelSpectrumChannel>();
    Ptr<RangePropagationLossModel> range = CreateObject<RangePropagationLossModel>();
    range->SetAttribute("MaxRange", DoubleValue(c.shared ? 1e6 : 1.5 * c.spacing));
    channel->AddPropagationLossModel(range);
    channel->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());

    LrWpanHelper lrwpan;
    lrwpan.SetChannel(channel);
    NetDeviceContainer lrDevices;
    std::vector<Ptr<GuardedPhy>> phys;
    for (int i = 0; i < n; ++i)
    {
        // LrWpanHelper::Install's steps, with the guarded PHY in place of the default one
        Ptr<LrWpanNetDevice> device = CreateObject<LrWpanNetDevice>();
        phys.push_back(CreateObject<GuardedPhy>());
        phys.back()->Hook(MicroSeconds(s.Int("turnaround_us")));
        device->SetPhy(phys.back());
        device->SetChannel(channel);
        nodes.Get(i)->AddDevice(device);
        device->SetNode(nodes.Get(i));
        lrDevices.Add(device);
    }
    lrwpan.AssociateToPan(lrDevices, 1);

    Ptr<GilbertElliott> ge = CreateObject<GilbertElliott>();
    // Every random variable a run draws from has a fixed stream (ns-3 numbers the others by creation order in the
    // process), so a run's result depends on its index alone, not on the runs before it in the same process.
    int64_t stream = lrwpan.AssignStreams(lrDevices, 0);
    ge->Configure(s.Num("fraction_bad"), s.Num("burst_us"), s.Num("good_us"), 1000);
    Ptr<FrameLossModel> loss = CreateObject<FrameLossModel>();
    loss->Configure(ge, s.Num("p_good"), s.Num("p_bad"), s.Int("ack_never") != 0, s.Num("byte_us"),
                    static_cast<int>(s.Int("phy_bytes")), static_cast<int>(s.Int("ack_psdu")), 1002);

    Counters counters;
    g_counters = &counters;
    g_maxRetries = static_cast<int>(s.Int("max_retries"));
    for (int i = 0; i < n; ++i)
    {
        Ptr<LrWpanNetDevice> dev = DynamicCast<LrWpanNetDevice>(lrDevices.Get(i));
        Ptr<LrWpanMac> mac = dev->GetMac();
        mac->SetMacMaxFrameRetries(static_cast<uint8_t>(s.Int("max_retries")));
        Ptr<LrWpanCsmaCa> csma = dev->GetCsmaCa();
        csma->SetMacMinBE(static_cast<uint8_t>(s.Int("min_be")));
        csma->SetMacMaxBE(static_cast<uint8_t>(std::max<int64_t>(s.Int("min_be"), s.Int("max_be"))));
        csma->SetMacMaxCSMABackoffs(static_cast<uint8_t>(s.Int("max_csma_backoffs")));
        csma->SetUnitBackoffPeriod(static_cast<uint64_t>(s.Int("unit_symbols")));
        dev->GetPhy()->SetPostReceptionErrorModel(loss);
        mac->TraceConnectWithoutContext("MacTx", MakeCallback(&OnMacTx));
        mac->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&OnMacDrop));
        g_lastOk[i] = false;
        mac->TraceConnectWithoutContext("MacTxOk", MakeBoundCallback(&OnMacTxOk, i));
        mac->TraceConnectWithoutContext("MacSentPkt", MakeBoundCallback(&OnMacSent, i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnPhyRxDrop));
        if (i == 0 || i == n - 1)
        {
            int endpoint = i == 0 ? 0 : 1;
            mac->TraceConnectWithoutContext("MacTxEnqueue", MakeBoundCallback(&OnMacEnqueue, endpoint));
            mac->TraceConnectWithoutContext("MacTxDequeue", MakeBoundCallback(&OnMacDequeue, endpoint));
        }
        else
        {
            mac->TraceConnectWithoutContext("MacTxEnqueue", MakeBoundCallback(&OnMacEnqueue, -1));
        }
    }

    InternetStackHelper internet;
    internet.SetIpv4StackInstall(false);
    internet.Install(nodes);
    stream += internet.AssignStreams(nodes, 2000);

    SixLowPanHelper sixlowpan;
    NetDeviceContainer devices = sixlowpan.Install(lrDevices);
    stream += sixlowpan.AssignStreams(devices, 3000);
    (void)stream;
    for (int i = 0; i < n; ++i)
    {
        Ptr<SixLowPanNetDevice> six = DynamicCast<SixLowPanNetDevice>(devices.Get(i));
        six->SetAttribute("OmitUdpChecksum", BooleanValue(s.Int("udp_checksum") == 0));
        six->SetAttribute("FragmentExpirationTimeout", TimeValue(MicroSeconds(s.Int("reasm_us"))));
        six->AddContext(0, Ipv6Prefix("fd00:db8::", 64), true, Seconds(1e6));
    }

    Ipv6AddressHelper ipv6;
    ipv6.SetBase(Ipv6Address("fd00:db8::"), Ipv6Prefix(64));
    Ipv6InterfaceContainer ifaces = ipv6.Assign(devices);
    // no queue disc stands between IPv6 and 6LoWPAN (the address helper installs one only on devices with a
    // transmission queue interface, which neither lr-wpan nor sixlowpan devices have)
    for (int i = 0; i < n; ++i)
    {
        ifaces.SetForwarding(i, true); // every node a router: no router solicitations
    }
    Ipv6StaticRoutingHelper routingHelper;
    for (int i = 0; i < n; ++i)
    {
        Ptr<Ipv6StaticRouting> routing = routingHelper.GetStaticRouting(nodes.Get(i)->GetObject<Ipv6>());
        for (int j = 0; j < n; ++j)
        {
            if (std::abs(i - j) <= 1)
            {
                continue;
            }
            int next = j > i ? i + 1 : i - 1;
            routing->AddHostRouteTo(ifaces.GetAddress(j, 1), ifaces.GetAddress(next, 1), ifaces.GetInterfaceIndex(i));
        }
    }
    // static neighbour entries for each node's route neighbours: no neighbour discovery traffic
    for (int i = 0; i < n; ++i)
    {
        Ptr<Ipv6L3Protocol> ip = nodes.Get(i)->GetObject<Ipv6L3Protocol>();
        Ptr<NdiscCache> cache = ip->GetInterface(ifaces.GetInterfaceIndex(i))->GetNdiscCache();
        for (int j = std::max(0, i - 1); j <= std::min(n - 1, i + 1); ++j)
        {
            if (j == i)
            {
                continue;
            }
            NdiscCache::Entry* entry = cache->Add(ifaces.GetAddress(j, 1));
            entry->SetMacAddress(devices.Get(j)->GetAddress());
            entry->MarkAutoGenerated();
        }
    }

    TypeId udp = TypeId::LookupByName("ns3::UdpSocketFactory");
    Ptr<Socket> ctrl = Socket::CreateSocket(nodes.Get(0), udp);
    Ptr<Socket> dev = Socket::CreateSocket(nodes.Get(n - 1), udp);
    ctrl->Bind(Inet6SocketAddress(ifaces.GetAddress(0, 1), kPort));
    dev->Bind(Inet6SocketAddress(ifaces.GetAddress(n - 1, 1), kPort));

    Handshake hs(c, ctrl, dev, ifaces.GetAddress(0, 1), ifaces.GetAddress(n - 1, 1), counters, 1003);
    g_handshake = &hs;
    Time start = MicroSeconds(s.Int("start_us"));
    if (c.mode == 0)
    {
        Simulator::Schedule(start, &Handshake::Start, &hs);
    }
    else
    {
        Simulator::Schedule(start, &Handshake::Transfer, &hs);
    }
    Simulator::Schedule(start + MicroSeconds(static_cast<int64_t>(c.maxTime)), &Handshake::TimeLimit, &hs);
    Simulator::Run();

    RunResult r;
    r.ok = hs.ok;
    r.timeUs = hs.done ? hs.timeUs - start.GetNanoSeconds() / 1000.0 : c.maxTime;
    if (!hs.done)
    {
        r.ok = false;
        r.failed = 0;
    }
    else
    {
        r.failed = hs.failed;
    }
    r.spurious = hs.spurious;
    r.counters = counters;
    r.lossModelDrops = loss->lost;
    r.guardIgnored = 0;
    r.phyFault = false;
    for (const auto& phy : phys)
    {
        r.guardIgnored += phy->ignored;
        r.phyFault = r.phyFault || phy->stuck;
    }
    g_handshake = nullptr;
    g_counters = nullptr;
    Simulator::Destroy();
    return r;
}

RunConfig
ReadConfig(const ScenarioFile& s)
{
    RunConfig c;
    c.hops = static_cast<int>(s.Int("hops"));
    c.mode = static_cast<int>(s.Int("mode"));
    c.shared = s.Int("shared") != 0;
    c.spacing = s.Num("spacing_m");
    c.devInterval = s.Num("dev_interval_us");
    c.ctrlInterval = s.Num("ctrl_interval_us");
    c.boost = s.Num("boost_us");
    c.margin = s.Num("margin");
    c.base = s.Num("base");
    c.jitter = s.Num("jitter");
    c.expCap = static_cast<int>(s.Int("exp_cap"));
    c.mrpTx = static_cast<int>(s.Int("mrp_tx"));
    c.standalone = s.Num("standalone_us");
    c.ctrlCompute = s.Num("ctrl_compute_us");
    c.devCompute2 = s.Num("dev_compute2_us");
    c.devCompute3 = s.Num("dev_compute3_us");
    c.maxTime = s.Num("max_time_us");
    c.dupAck = s.Int("dup_ack") != 0;
    c.ackOnArrival = s.Int("ack_on_arrival") != 0;
    c.blockHandoff = s.Int("block_handoff") != 0;
    const auto& modes = s.List("msg_mode");
    if (modes.size() != 4)
    {
        std::fprintf(stderr, "scenario: msg_mode needs 4 values\n");
        std::exit(2);
    }
    for (int i = 0; i < 4; ++i)
    {
        c.msgMode[i] = static_cast<int>(modes[i]);
        std::string k = std::to_string(i);
        c.msgBytes[i] = static_cast<uint32_t>(s.Int("msg_bytes_" + k));
        for (double u : s.List("msg_units_" + k))
        {
            c.msgUnits[i].push_back(static_cast<uint32_t>(u));
        }
        c.msgUnitLf[i] = s.List("msg_unit_lf_us_" + k);
        if (c.msgUnits[i].empty() || c.msgUnits[i].size() != c.msgUnitLf[i].size() || c.msgUnits[i].size() > 64)
        {
            std::fprintf(stderr, "scenario: message %d: 1..64 units with a loss-free time each\n", i);
            std::exit(2);
        }
        c.bitmapPayload[i] = static_cast<uint32_t>(s.List("bitmap_payload").at(i));
        c.bitmapLf[i] = s.List("bitmap_lf_us").at(i);
        c.requestPayload[i] = static_cast<uint32_t>(s.List("request_payload").at(i));
        c.requestLf[i] = s.List("request_lf_us").at(i);
    }
    c.ackPayload = static_cast<uint32_t>(s.Int("ack_payload"));
    c.ackLf = s.Num("ack_lf_us");
    return c;
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 2)
    {
        std::fprintf(stderr, "usage: %s SCENARIO_FILE\n", argv[0]);
        return 2;
    }
    ScenarioFile s = ReadScenario(argv[1]);
    RunConfig c = ReadConfig(s);
    if (c.hops < 1 || c.hops > 16)
    {
        std::fprintf(stderr, "scenario: hops must be 1..16\n");
        return 2;
    }
    // Simulated time is integer nanoseconds; the PHY's symbol and byte times come from its 2.4 GHz O-QPSK page.
    Time::SetResolution(Time::NS);
    // addresses are configured statically: no duplicate address detection, no ICMPv6 redirects when a router
    // forwards a packet out of the interface it came in on (every router of a chain does)
    Config::SetDefault("ns3::Icmpv6L4Protocol::DAD", BooleanValue(false));
    Config::SetDefault("ns3::Ipv6L3Protocol::SendIcmpv6Redirect", BooleanValue(false));
    {
        Ptr<LrWpanPhy> phy = CreateObject<LrWpanPhy>();
        double symbolRate = phy->GetDataOrSymbolRate(false);
        double dataRate = phy->GetDataOrSymbolRate(true);
        Ptr<LrWpanMac> mac = CreateObject<LrWpanMac>();
        mac->SetPhy(phy);
        Ptr<LrWpanCsmaCa> csma = CreateObject<LrWpanCsmaCa>();
        mac->SetCsmaCa(csma);
        csma->SetMac(mac);
        csma->SetUnitBackoffPeriod(static_cast<uint64_t>(s.Int("unit_symbols")));
        double symbolUs = 1e6 / symbolRate;
        std::printf("# symbol_us %.3f\n", symbolUs);
        std::printf("# byte_us %.3f\n", 8e6 / dataRate);
        std::printf("# turnaround_us %.3f\n", phy->aTurnaroundTime * symbolUs);
        std::printf("# cca_us %.3f\n", 8 * symbolUs);
        std::printf("# shr_bytes %.3f\n", phy->GetPhySHRDuration() / phy->GetPhySymbolsPerOctet() + 1);
        std::printf("# unit_backoff_us %.3f\n", csma->GetUnitBackoffPeriod() * symbolUs);
        std::printf("# ack_wait_us %.3f\n", mac->GetMacAckWaitDuration() * symbolUs);
        std::printf("# lifs_us %.3f\n", 40 * symbolUs);
        std::printf("# sifs_us %.3f\n", 12 * symbolUs);
        std::printf("# mtu_6lowpan_payload %d\n", 114);
        Simulator::Destroy();
    }
    std::printf("# fields run ok time_us failed_message retransmissions spurious frames ack_frames mac_drops "
                "noack_drops cca_drops phy_rx_drops loss_model_drops datagrams_sent datagrams_recv psdu_bytes turnaround_ignored phy_fault\n");
    int64_t first = s.Int("first_run");
    int64_t count = s.Int("runs");
    std::map<uint32_t, uint64_t> sizes;
    for (int64_t r = first; r < first + count; ++r)
    {
        RunResult res = RunOnce(s, c, static_cast<uint32_t>(r));
        const Counters& k = res.counters;
        std::printf("run %lld %d %.0f %d %llu %d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %d\n",
                    static_cast<long long>(r), res.ok ? 1 : 0, res.timeUs, res.failed,
                    static_cast<unsigned long long>(k.mrpRetrans), res.spurious,
                    static_cast<unsigned long long>(k.dataFrames), static_cast<unsigned long long>(k.ackFrames),
                    static_cast<unsigned long long>(k.macDrops), static_cast<unsigned long long>(k.noAckDrops),
                    static_cast<unsigned long long>(k.ccaDrops), static_cast<unsigned long long>(k.phyRxDrops),
                    static_cast<unsigned long long>(res.lossModelDrops),
                    static_cast<unsigned long long>(k.datagramsSent),
                    static_cast<unsigned long long>(k.datagramsRecv), static_cast<unsigned long long>(k.psduBytes),
                    static_cast<unsigned long long>(res.guardIgnored), res.phyFault ? 1 : 0);
        if (r == first)
        {
            sizes = k.psduSizes;
        }
        std::fflush(stdout);
    }
    std::printf("# psdu_sizes_first_run");
    for (const auto& kv : sizes)
    {
        std::printf(" %u:%llu", kv.first, static_cast<unsigned long long>(kv.second));
    }
    std::printf("\n");
    return 0;
}
