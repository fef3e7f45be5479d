// The independent scenario's Kafka side tools, on the Apache Kafka 4.1 Java clients (no mailstats code):
//   topics BOOTSTRAP PARTITIONS TOPIC...   create the topics (kept when they exist), wait for their leaders
//   watch BOOTSTRAP GROUP TOPIC,TOPIC      every 200 ms read the group's committed offsets; print
//                                          "C <epoch ms> <sum> <p=o,...>" when they change and, every second,
//                                          "L <epoch ms> <lag> <committed sum> <end sum>"; exits when stdin closes
//   dlq BOOTSTRAP TOPIC OUTFILE            read the whole topic: one line per message,
//                                          "<partition> <offset> <key b64|-> <value b64|-> <name b64>:<value b64>,..."
// Run as a single-file source program: java -cp '<jars>/*' Admin.java <command> ...
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class Admin {
  static AdminClient admin(String bootstrap) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    return AdminClient.create(p);
  }

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "topics" -> topics(args);
      case "watch" -> watch(args);
      case "dlq" -> dlq(args);
      default -> throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  static void topics(String[] args) throws Exception {
    int partitions = Integer.parseInt(args[2]);
    List<String> names = List.of(args).subList(3, args.length);
    try (AdminClient a = admin(args[1])) {
      for (String name : names) {
        try {
          a.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
          System.out.println("topic " + name + ": created with " + partitions + " partitions");
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof TopicExistsException)) throw e;
          System.out.println("topic " + name + ": exists");
        }
      }
      long deadline = System.currentTimeMillis() + 60_000;
      while (true) {
        Map<String, TopicDescription> d;
        try {
          d = a.describeTopics(names).allTopicNames().get();
        } catch (ExecutionException e) {
          d = Map.of(); // just created: metadata not everywhere yet
        }
        boolean ready =
            d.size() == names.size()
                && d.values().stream().allMatch(t -> t.partitions().size() == partitions && t.partitions().stream().allMatch(x -> x.leader() != null && x.leader().id() >= 0));
        if (ready) break;
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("topics have no leaders after 60 s");
        Thread.sleep(200);
      }
    }
  }

  static void watch(String[] args) throws Exception {
    String group = args[2];
    List<String> topics = List.of(args[3].split(","));
    Thread stdin =
        new Thread(
            () -> {
              try {
                while (System.in.read() >= 0) {}
              } catch (Exception ignored) {
              }
              System.exit(0);
            });
    stdin.setDaemon(true);
    stdin.start();
    try (AdminClient a = admin(args[1])) {
      List<TopicPartition> tps = new ArrayList<>();
      for (TopicDescription t : a.describeTopics(topics).allTopicNames().get().values())
        t.partitions().forEach(x -> tps.add(new TopicPartition(t.name(), x.partition())));
      Map<TopicPartition, Long> last = null;
      long lastLag = 0;
      while (true) {
        long now = System.currentTimeMillis();
        try {
          Map<TopicPartition, OffsetAndMetadata> c = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
          Map<TopicPartition, Long> committed = new TreeMap<>((x, y) -> x.toString().compareTo(y.toString()));
          for (TopicPartition tp : tps) {
            OffsetAndMetadata o = c.get(tp);
            committed.put(tp, o == null ? 0L : o.offset());
          }
          if (!committed.equals(last)) {
            long sum = committed.values().stream().mapToLong(Long::longValue).sum();
            String detail = committed.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
            System.out.println("C " + now + " " + sum + " " + detail);
            last = committed;
          }
          if (now - lastLag >= 1000) {
            lastLag = now;
            Map<TopicPartition, OffsetSpec> q = new HashMap<>();
            for (TopicPartition tp : tps) q.put(tp, OffsetSpec.latest());
            long end = 0;
            for (var e : a.listOffsets(q).all().get().values()) end += e.offset();
            long sum = committed.values().stream().mapToLong(Long::longValue).sum();
            System.out.println("L " + now + " " + (end - sum) + " " + sum + " " + end);
          }
          System.out.flush();
        } catch (ExecutionException e) {
          System.out.println("E " + now + " " + e.getCause());
          System.out.flush();
        }
        Thread.sleep(200);
      }
    }
  }

  static String b64(byte[] b) {
    return b == null ? "-" : Base64.getEncoder().encodeToString(b);
  }

  static void dlq(String[] args) throws Exception {
    String topic = args[2];
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
    long n = 0;
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        PrintWriter out = new PrintWriter(Files.newBufferedWriter(Path.of(args[3]), StandardCharsets.UTF_8))) {
      List<TopicPartition> tps =
          c.partitionsFor(topic).stream().map(x -> new TopicPartition(topic, x.partition())).collect(Collectors.toList());
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> end = c.endOffsets(tps);
      long deadline = System.currentTimeMillis() + 120_000;
      while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("dead letters not read within 120 s");
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
          StringBuilder h = new StringBuilder();
          for (Header x : r.headers()) {
            if (h.length() > 0) h.append(',');
            h.append(b64(x.key().getBytes(StandardCharsets.UTF_8))).append(':').append(b64(x.value()));
          }
          out.println(r.partition() + " " + r.offset() + " " + b64(r.key()) + " " + b64(r.value()) + " " + (h.length() == 0 ? "-" : h));
          n++;
        }
      }
    }
    System.out.println("dlq: " + n + " messages read from " + topic);
  }
}
